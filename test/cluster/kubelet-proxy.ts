/**
 * The path from kube-apiserver (on the host) to the guest's kubelet, for `kubectl logs/exec`.
 *
 * The apiserver dials a node at its InternalIP (10.0.2.15, the guest's address under qemu user
 * networking), which the host cannot reach; qemu forwards one host port to the guest's :10250
 * instead. The apiserver honours HTTPS_PROXY for kubelet connections, so it is started with
 * HTTPS_PROXY pointing here: an HTTP CONNECT proxy that sends `<node address>:10250` to the
 * forwarded port and refuses every other target (nothing else may leave through it).
 */
import * as http from "node:http";
import * as net from "node:net";

export interface KubeletProxy {
  /** http://127.0.0.1:<port>, for HTTPS_PROXY. */
  readonly url: string;
  /** Routes CONNECT <address>:<kubeletPort> to 127.0.0.1:<hostPort>. */
  route(address: string, kubeletPort: number, hostPort: number): void;
  /** CONNECT targets refused so far (for diagnostics). */
  readonly refused: readonly string[];
  close(): Promise<void>;
}

export async function startKubeletProxy(): Promise<KubeletProxy> {
  const routes = new Map<string, number>();
  const refused: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = http.createServer((_req, res) => {
    res.writeHead(405, { "content-type": "text/plain" });
    res.end("only CONNECT to a kubelet is proxied here\n");
  });
  server.on("connect", (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? "";
    const port = routes.get(target);
    if (port === undefined) {
      refused.push(target);
      client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
      return;
    }
    const upstream = net.connect(port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const addr = server.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    route(address, kubeletPort, hostPort) {
      routes.set(`${address}:${kubeletPort}`, hostPort);
    },
    refused,
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
