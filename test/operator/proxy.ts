import * as net from "node:net";

/** A TCP proxy to a port, which a test can cut (reset every connection) and hold down (refuse new ones). */
export interface CuttableProxy {
  readonly port: number;
  /** Resets every open connection; with `down`, also every new one until up(). */
  cut(down?: boolean): void;
  up(): void;
  close(): Promise<void>;
}

export async function startProxy(targetPort: number): Promise<CuttableProxy> {
  const sockets = new Set<net.Socket>();
  let down = false;
  const server = net.createServer((client) => {
    if (down) return void client.resetAndDestroy();
    const upstream = net.connect(targetPort, "127.0.0.1");
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
      s.on("error", () => undefined);
    }
    client.pipe(upstream).pipe(client);
    client.on("close", () => upstream.destroy());
    upstream.on("close", () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as net.AddressInfo).port;
  return {
    port,
    cut(hold = false) {
      down = hold;
      for (const s of sockets) s.resetAndDestroy();
    },
    up() {
      down = false;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
