/**
 * The apiserver's way from the host into the guest node: kubelets (logs, exec) and the pod network
 * (admission webhooks, aggregated APIs, `pods/proxy`), as a real cluster's apiserver reaches them.
 *
 * The apiserver dials a node by its name or InternalIP (10.0.2.15, the guest's address under qemu
 * user networking) and a pod at its IP (10.244.0.x; webhooks too, with --enable-aggregator-routing),
 * none of which the host can reach. This is an HTTP CONNECT proxy that
 *   - sends `<node address>:10250` to qemu's forward of the kubelet port (route());
 *   - once relayPods() named a forwarded guest port, passes every other target to the CONNECT relay
 *     the node runs there (test/cluster/pod-relay.mjs), which dials it only if it is inside the pod
 *     CIDR and answers 403 otherwise: the pod network is the one place that decides;
 *   - refuses every target without a route (403), and records each refusal, its own or the relay's.
 * The apiserver reaches it through its egress selector (`egressConfigFile`: the "cluster" egress,
 * HTTPConnect over this proxy's unix socket), which every apiserver → node and → pod connection
 * uses. HTTPS_PROXY is not enough: the apiserver's plain requests (logs) honour it, but its exec
 * streams (the WebSocket → SPDY translator) dial the node directly ("lookup pl-node: no such host").
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { writeEgressSelectorConfig } from "../env/egress-selector";

/** The guest half: `node POD_RELAY <listen address:port> <pod CIDR>` (run by the node, startCluster). */
export const POD_RELAY = path.join(__dirname, "pod-relay.mjs");

export interface KubeletProxy {
  /** http://127.0.0.1:<port>: the same proxy over TCP. */
  readonly url: string;
  /** The proxy's unix socket. */
  readonly socketPath: string;
  /** An EgressSelectorConfiguration sending the apiserver's "cluster" egress here (--egress-selector-config-file). */
  readonly egressConfigFile: string;
  /** Routes CONNECT <address>:<kubeletPort> to 127.0.0.1:<hostPort>. */
  route(address: string, kubeletPort: number, hostPort: number): void;
  /** Passes every CONNECT without a route() to the node's pod relay at 127.0.0.1:<hostPort>. */
  relayPods(hostPort: number): void;
  /** CONNECT targets refused so far, here or by the relay (for diagnostics). */
  readonly refused: readonly string[];
  close(): Promise<void>;
}

/** The end of an HTTP response's header block in `buf`, or -1. */
const headerEnd = (buf: Buffer) => buf.indexOf("\r\n\r\n");

export async function startKubeletProxy(): Promise<KubeletProxy> {
  const routes = new Map<string, number>();
  let relayPort: number | undefined;
  const refused: string[] = [];
  const sockets = new Set<net.Socket>();
  const track = (...ss: net.Socket[]) => {
    for (const s of ss) {
      sockets.add(s);
      s.on("close", () => sockets.delete(s));
    }
  };
  /** Tunnels `client` to 127.0.0.1:port directly (a kubelet's forwarded port). */
  const direct = (client: net.Socket, head: Buffer, port: number) => {
    const upstream = net.connect(port, "127.0.0.1", () => {
      client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
      if (head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    track(client, upstream);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
  };

  /** Asks the relay at 127.0.0.1:port for `target` and hands its answer, whatever it is, to `client`. */
  const relayed = (client: net.Socket, head: Buffer, port: number, target: string) => {
    const upstream = net.connect(port, "127.0.0.1", () =>
      upstream.write(`CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`),
    );
    track(client, upstream);
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = headerEnd(buf);
      if (end < 0) return;
      upstream.off("data", onData);
      const status = /^HTTP\/1\.[01] (\d{3})/.exec(buf.toString("latin1", 0, end))?.[1];
      if (status !== "200") refused.push(target);
      client.write(buf);
      if (status === "200" && head.length) upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    };
    upstream.on("data", onData);
    upstream.on("error", (e) => {
      if (buf.length === 0) {
        refused.push(target);
        client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nthe pod relay at 127.0.0.1:${port}: ${e.message}\n`);
      } else client.destroy();
    });
    client.on("error", () => upstream.destroy());
  };

  const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(405, { "content-type": "text/plain" });
    res.end("only CONNECT to a kubelet or a pod is proxied here\n");
  };
  const onConnect = (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    const target = req.url ?? "";
    const port = routes.get(target);
    if (port !== undefined) return direct(client, head, port);
    if (relayPort !== undefined) return relayed(client, head, relayPort, target);
    refused.push(target);
    client.end("HTTP/1.1 403 Forbidden\r\n\r\n");
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pl-kubelet-proxy-"));
  const socketPath = path.join(dir, "proxy.sock");
  const egressConfigFile = path.join(dir, "egress-selector.yaml");
  writeEgressSelectorConfig(egressConfigFile, socketPath);
  const servers = [http.createServer(onRequest), http.createServer(onRequest)];
  for (const s of servers) s.on("connect", onConnect);
  const listen = (s: http.Server, ...at: [number, string] | [string]) =>
    new Promise<void>((resolve, reject) => {
      s.once("error", reject);
      s.listen(...(at as [string]), () => resolve());
    });
  await listen(servers[0]!, 0, "127.0.0.1");
  await listen(servers[1]!, socketPath);
  const addr = servers[0]!.address() as net.AddressInfo;
  return {
    url: `http://127.0.0.1:${addr.port}`,
    socketPath,
    egressConfigFile,
    route(address, kubeletPort, hostPort) {
      routes.set(`${address}:${kubeletPort}`, hostPort);
    },
    relayPods(hostPort) {
      relayPort = hostPort;
    },
    refused,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
