import * as fs from "node:fs";
import type * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { AgentService } from "../../../src/agent/agent-service";
import { createAuthorizer } from "../../../src/agent/auth/authorizer";
import { createStaticTokenClient, parseTokenFile } from "../../../src/agent/auth/token-file";
import { Journal } from "../../../src/agent/journal";
import { AgentMetrics } from "../../../src/agent/metrics";
import { healthRoutes } from "../../../src/agent/routes/health";
import { v1Routes } from "../../../src/agent/routes/v1";
import { createAgentServer } from "../../../src/agent/server";
import { FakeNode, fakePlanner } from "./fake-node";

/**
 * Many node agents in one process: for each node, the REAL agent code (AgentService, the HTTP
 * server and its /v1 routes, the authorizer, the journal) over a FakeNode instead of lvm2 and
 * block devices, on its own port (plain HTTP). So tests and benchmarks about the operator and the
 * API server run 500 agents without 500 processes or any root. The agents accept one static token
 * (`token`), for their own node only.
 */
export interface FakeAgent {
  readonly node: string;
  readonly fake: FakeNode;
  readonly port: number;
  /** Requests as `METHOD /path`, in order. */
  readonly requests: string[];
  /** When each of `requests` came (ms since the epoch). */
  readonly times: number[];
}

export interface FakeAgents {
  readonly token: string;
  readonly agents: ReadonlyMap<string, FakeAgent>;
  close(): Promise<void>;
}

/** The token every fake agent accepts, for its own node only. */
export const FAKE_AGENT_TOKEN = "fake-agent-token-0123456789abcdef";

export async function startFakeAgents(
  nodes: readonly string[],
  options: {
    readonly devices?: readonly string[];
    readonly namespace?: string;
    /** Each lvm command takes this long (an apply in flight for a while). @default 0 */
    readonly commandDelayMs?: number;
  } = {},
): Promise<FakeAgents> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fake-agents-"));
  const servers: http.Server[] = [];
  const agents = new Map<string, FakeAgent>();
  for (const node of nodes) {
    const fake = new FakeNode(options.devices ?? ["/dev/vdb"]);
    const stateDir = path.join(dir, node);
    fs.mkdirSync(stateDir, { recursive: true });
    const metrics = new AgentMetrics();
    const service = new AgentService({
      node,
      run: options.commandDelayMs
        ? async (argv, opts) => {
            await new Promise((r) => setTimeout(r, options.commandDelayMs));
            return fake.run(argv, opts);
          }
        : fake.run,
      // FakeNode's inventory names "node-a"; an agent answers for its own node.
      discover: async () => ({ ...(await fake.discover()), node }),
      planner: fakePlanner,
      journal: new Journal({ stateDir: path.join(stateDir, "state") }),
      metrics,
      lvmdConfigPath: path.join(stateDir, "lvmd.yaml"),
      identity: fake.identity,
    });
    const requests: string[] = [];
    const times: number[] = [];
    const server = createAgentServer({
      routes: [...healthRoutes({ notReady: () => undefined }), ...v1Routes(service)],
      authorize: createAuthorizer({
        client: createStaticTokenClient(parseTokenFile(`${FAKE_AGENT_TOKEN},operator,${node}\n`)),
        node,
      }),
      metrics,
      serves: { node, namespace: options.namespace ?? "" },
    });
    server.on("request", (req: http.IncomingMessage) => {
      requests.push(`${req.method} ${req.url}`);
      times.push(Date.now());
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    servers.push(server);
    agents.set(node, { node, fake, port: (server.address() as AddressInfo).port, requests, times });
  }
  return {
    token: FAKE_AGENT_TOKEN,
    agents,
    close: async () => {
      for (const s of servers) {
        s.closeAllConnections();
        await new Promise<void>((r) => s.close(() => r()));
      }
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
