import * as http from "node:http";
import type { AddressInfo } from "node:net";

/**
 * Stand-in agents (named so), for tests and benchmarks about the operator and the API server where
 * the agents' behaviour does not matter: one HTTP listener per node answering /v1/plan with an
 * empty plan and /v1/status with Ready, for that node; anything else is 404.
 */
export interface StandInAgents {
  /** Each node's listener port (127.0.0.1). */
  readonly ports: Map<string, number>;
  close(): void;
}

/** Stand-in agents: one listener per node; answers name the node they stand for. */
export async function standInAgents(nodes: readonly string[]): Promise<StandInAgents> {
  const servers: http.Server[] = [];
  const ports = new Map<string, number>();
  for (const node of nodes) {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => {
        res.setHeader("content-type", "application/json");
        if (req.url?.endsWith("/v1/plan"))
          return res.end(
            JSON.stringify({
              node,
              selected: true,
              volumeGroups: [],
              actions: [],
              blocked: [],
              lvmd: { "device-classes": [] },
              hash: "stand-in",
            }),
          );
        if (req.url?.endsWith("/v1/status"))
          return res.end(
            JSON.stringify({ node, status: { state: "Ready", volumeGroups: [], conditions: [] } }),
          );
        res.statusCode = 404;
        res.end(JSON.stringify({ error: { code: "NotFound", message: req.url } }));
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    servers.push(server);
    ports.set(node, (server.address() as AddressInfo).port);
  }
  return { ports, close: () => servers.forEach((s) => s.close()) };
}
