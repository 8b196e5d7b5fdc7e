/**
 * The path from kube-apiserver (on the host) to the guest's kubelet, for `kubectl logs/exec`.
 *
 * The apiserver dials a node by its name or InternalIP (10.0.2.15, the guest's address under qemu
 * user networking), which the host cannot reach; qemu forwards one host port to the guest's :10250
 * instead. This is an HTTP CONNECT proxy that sends `<node address>:10250` to the forwarded port and
 * refuses every other target (nothing else may leave through it). The apiserver reaches it through
 * its egress selector (`egressConfigFile`: the "cluster" egress, HTTPConnect over this proxy's unix
 * socket), which every apiserver → kubelet connection uses. HTTPS_PROXY is not enough: the
 * apiserver's plain requests (logs) honour it, but its exec streams (the WebSocket → SPDY
 * translator) dial the node directly ("lookup pl-node: no such host").
 */
import * as fs from "node:fs";
import * as http from "node:http";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";

export interface KubeletProxy {
  /** http://127.0.0.1:<port>: the same proxy over TCP. */
  readonly url: string;
  /** The proxy's unix socket. */
  readonly socketPath: string;
  /** An EgressSelectorConfiguration sending the apiserver's "cluster" egress here (--egress-selector-config-file). */
  readonly egressConfigFile: string;
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
  const onRequest = (_req: http.IncomingMessage, res: http.ServerResponse) => {
    res.writeHead(405, { "content-type": "text/plain" });
    res.end("only CONNECT to a kubelet is proxied here\n");
  };
  const onConnect = (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
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
  };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pl-kubelet-proxy-"));
  const socketPath = path.join(dir, "proxy.sock");
  const egressConfigFile = path.join(dir, "egress-selector.yaml");
  fs.writeFileSync(
    egressConfigFile,
    [
      "apiVersion: apiserver.k8s.io/v1beta1",
      "kind: EgressSelectorConfiguration",
      "egressSelections:",
      "  - name: cluster",
      "    connection:",
      "      proxyProtocol: HTTPConnect",
      "      transport:",
      "        uds:",
      `          udsName: ${socketPath}`,
      "",
    ].join("\n"),
  );
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
    refused,
    close: async () => {
      for (const s of sockets) s.destroy();
      await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
