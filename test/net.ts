import * as net from "node:net";

/**
 * Every port this process has handed out. The kernel reuses a closed port freely (1000 sequential
 * probes here returned 63 repeats), so a port already given to one caller is never given to another:
 * two servers of one test process cannot be told the same port between probing and binding.
 */
const handedOut = new Set<number>();

/** Most probes to make for one port before giving up (the kernel's range is ~28k ports). */
const MAX_PROBES = 1000;

function listenOnAnyPort(srv: net.Server): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      if (!addr || typeof addr === "string") reject(new Error("no port"));
      else resolve(addr.port);
    });
  });
}

/** A loopback port the kernel says is free right now, never handed out before in this process. */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  if (port === undefined) throw new Error("freePorts(1) returned no port");
  return port;
}

/**
 * `count` distinct loopback ports, free right now and never handed out before in this process: every
 * listener stays open until all are picked, so the kernel cannot hand out one port twice within a
 * call (a qemu given the same port for two forwards fails to start), and ports of earlier calls are
 * skipped (held open too, so the kernel offers another).
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    const ports: number[] = [];
    for (let probes = 0; ports.length < count; probes++) {
      if (probes >= MAX_PROBES) {
        throw new Error(
          `freePorts(${count}): ${probes} probes found only ${ports.length} ports not handed out before`,
        );
      }
      const srv = net.createServer();
      srv.unref();
      servers.push(srv);
      const port = await listenOnAnyPort(srv);
      if (handedOut.has(port)) continue;
      handedOut.add(port);
      ports.push(port);
    }
    return ports;
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
  }
}

/**
 * A loopback port that refuses connections, checked: for a test of "nothing listens there". Not a
 * freePort(): its port is free only when picked, and another test process (npm test runs two lanes
 * side by side) can be listening there by the time it is dialled — an SSH client dialling a port
 * whose listener accepts and never speaks SSH waits forever. A privileged port below 1024 that no
 * test binds cannot be taken that way; it throws when something does listen there.
 */
export async function refusingPort(): Promise<number> {
  const port = 1; // tcpmux: nothing on these machines listens there, and only root could bind it
  const refused = await new Promise<boolean>((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => (socket.destroy(), resolve(false)));
    socket.once("error", (e: NodeJS.ErrnoException) => resolve(e.code === "ECONNREFUSED"));
  });
  if (!refused)
    throw new Error(`refusingPort: 127.0.0.1:${port} does not refuse connections on this machine`);
  return port;
}
