/**
 * The pod network as a test control plane's API server reaches it. There are no nodes and no CNI
 * here, and the API server refuses to proxy to loopback or link-local pod IPs (pkg/registry/core/pod
 * ResourceLocation: the IP must be global unicast). So the API server is started with an egress
 * selector (`--egress-selector-config-file`): its "cluster" traffic, which is what the pods/proxy
 * subresource dials, goes over HTTP CONNECT through a unix socket, as it does to konnectivity in
 * many real clusters. This server answers those CONNECTs for the pod IPs a test routes, to the
 * agent processes listening on 127.0.0.1: the pod IPs (TEST-NET-2, 198.51.100.0/24) are never
 * dialled, and no traffic leaves the loopback interface.
 */
import * as net from "node:net";
import * as path from "node:path";
import { writeEgressSelectorConfig } from "../env/egress-selector";

export class PodNetwork {
  /** Every CONNECT the API server made, as "ip:port" (routed or not), in order. */
  readonly connects: string[] = [];
  private readonly routes = new Map<string, number>();
  private readonly sockets = new Set<net.Socket>();

  private constructor(
    private readonly server: net.Server,
    /** The EgressSelectorConfiguration file for kube-apiserver's --egress-selector-config-file. */
    readonly configFile: string,
  ) {}

  /** Listens on `<dir>/pods.sock` and writes `<dir>/egress-selector.yaml`. */
  static async start(dir: string): Promise<PodNetwork> {
    const socket = path.join(dir, "pods.sock");
    const configFile = path.join(dir, "egress-selector.yaml");
    writeEgressSelectorConfig(configFile, socket);
    const server = net.createServer();
    const network = new PodNetwork(server, configFile);
    server.on("connection", (client) => network.accept(client));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socket, resolve);
    });
    return network;
  }

  /** Connections to `podIp:port` reach 127.0.0.1:`localPort`. */
  route(podIp: string, port: number, localPort: number): void {
    this.routes.set(`${podIp}:${port}`, localPort);
  }

  async close(): Promise<void> {
    for (const s of this.sockets) s.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: net.Socket): void {
    this.sockets.add(client);
    client.on("close", () => this.sockets.delete(client));
    client.on("error", () => client.destroy());
    let head = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]);
      const end = head.indexOf("\r\n\r\n");
      if (end < 0) return;
      client.off("data", onData);
      const target = /^CONNECT (\S+) HTTP\/1\.1\r\n/.exec(head.toString("latin1"))?.[1] ?? "?";
      this.connects.push(target);
      const localPort = this.routes.get(target);
      if (localPort === undefined) {
        client.end(`HTTP/1.1 502 Bad Gateway\r\n\r\nno route to ${target}`);
        return;
      }
      const upstream = net.connect(localPort, "127.0.0.1", () => {
        client.write("HTTP/1.1 200 Connection established\r\n\r\n");
        const rest = head.subarray(end + 4);
        if (rest.length) upstream.write(rest);
        client.pipe(upstream);
        upstream.pipe(client);
      });
      this.sockets.add(upstream);
      upstream.on("close", () => {
        this.sockets.delete(upstream);
        client.destroy();
      });
      upstream.on("error", () => client.destroy());
      client.on("close", () => upstream.destroy());
    };
    client.on("data", onData);
  }
}
