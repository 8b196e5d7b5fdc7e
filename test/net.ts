import * as net from "node:net";

/** A loopback port the kernel says is free right now (closed again before we return it). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      if (!addr || typeof addr === "string") return reject(new Error("no port"));
      srv.close(() => resolve(addr.port));
    });
  });
}

/**
 * `count` distinct loopback ports, free right now: every listener stays open until all are picked,
 * so the kernel cannot hand out one port twice (sequential freePort() calls can: each port is closed
 * before the next is asked for, and a qemu given the same port for two forwards fails to start).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let i = 0; i < count; i++) {
      const srv = net.createServer();
      srv.unref();
      servers.push(srv);
      ports.push(
        await new Promise<number>((resolve, reject) => {
          srv.on("error", reject);
          srv.listen(0, "127.0.0.1", () => {
            const addr = srv.address();
            if (!addr || typeof addr === "string") reject(new Error("no port"));
            else resolve(addr.port);
          });
        }),
      );
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}
