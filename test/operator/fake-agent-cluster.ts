/**
 * A real kube-apiserver, N nodes and their agents, each agent the REAL agent code over a FakeNode,
 * all hosted in this process (test/support/agent/fake-agents.ts), plain HTTP with one static token:
 * for tests and benchmarks about the operator and the API server, where the disks are not the
 * point. Agent pods are API objects (no kubelet: their status is written here) at 127.0.0.1 and
 * each agent's port. Optionally an in-process operator (startTestOperator) drives them.
 */
import { startControlPlane, type ControlPlane, type ControlPlaneOptions } from "../env/cluster";
import { startFakeAgents, type FakeAgents } from "../support/agent/fake-agents";
import { createAgentServiceAccount, registerAgentNodes } from "./agent-pods";
import {
  eventually,
  must,
  plainHttpAgents,
  prepareCluster,
  startTestOperator,
  type TestOperator,
} from "./env";

export interface FakeAgentCluster {
  readonly cp: ControlPlane;
  readonly agents: FakeAgents;
  /** The in-process operator, when asked for. */
  readonly op?: TestOperator;
  stop(): Promise<void>;
}

export interface FakeAgentClusterOptions {
  readonly nodes: readonly string[];
  readonly namespaces: readonly string[];
  readonly labels?: Record<string, string>;
  /** Start an operator in this process with this resync; absent: none (the test starts its own). */
  readonly resyncMs?: number;
  readonly controlPlane?: ControlPlaneOptions;
  /** Node and pod objects written at once while registering. @default 8 */
  readonly concurrency?: number;
  /** Each fake node's devices. @default ["/dev/vdb"] */
  readonly devices?: readonly string[];
  /** Each lvm command on a fake node takes this long. @default 0 */
  readonly commandDelayMs?: number;
  /** The in-process operator records Events. @default false */
  readonly events?: boolean;
  /** A node's labels, instead of `labels`. */
  readonly labelsOf?: (node: string) => Record<string, string>;
}

export async function startFakeAgentCluster(o: FakeAgentClusterOptions): Promise<FakeAgentCluster> {
  const cp = await startControlPlane(o.controlPlane ?? {});
  try {
    await prepareCluster(cp);
    for (const ns of o.namespaces) await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: ns } });
    await createAgentServiceAccount(cp);
    const agents = await startFakeAgents(o.nodes, {
      namespace: o.namespaces[0]!,
      ...(o.devices ? { devices: o.devices } : {}),
      ...(o.commandDelayMs ? { commandDelayMs: o.commandDelayMs } : {}),
    });
    await registerAgentNodes(cp, o.nodes, {
      portOf: (node) => agents.agents.get(node)!.port,
      labelsOf: (node) => o.labelsOf?.(node) ?? o.labels ?? { role: "storage" },
      concurrency: o.concurrency ?? 8,
    });
    const op =
      o.resyncMs === undefined
        ? undefined
        : startTestOperator(cp, cp.url, {
            agents: plainHttpAgents(async () => agents.token),
            resyncMs: o.resyncMs,
            ...(o.events ? { events: true } : {}),
          });
    if (op) await eventually("caches synced", async () => op.operator.ready);
    return {
      cp,
      agents,
      ...(op ? { op } : {}),
      stop: async () => {
        await op?.stop();
        await agents.close();
        await cp.stop();
      },
    };
  } catch (e) {
    await cp.stop();
    throw e;
  }
}

/**
 * A FakeAgentCluster started before this test file's tests and stopped after them. The object
 * returned stands for it from the first test on. `teardown.beforeStop` and `teardown.afterStop` run
 * around its stop (what the file started against it goes first; what the API server writes to, last).
 */
export function useFakeAgentCluster(
  options: FakeAgentClusterOptions,
  teardown: { readonly beforeStop?: () => void; readonly afterStop?: () => void } = {},
): FakeAgentCluster {
  let started: FakeAgentCluster | undefined;
  beforeAll(async () => {
    started = await startFakeAgentCluster(options);
  }, 180_000);
  afterAll(async () => {
    teardown.beforeStop?.();
    await started?.stop();
    teardown.afterStop?.();
  });
  const cluster = (): FakeAgentCluster => {
    if (!started)
      throw new Error("the fake agent cluster is not running (its beforeAll failed or has not run)");
    return started;
  };
  return {
    get cp() {
      return cluster().cp;
    },
    get agents() {
      return cluster().agents;
    },
    get op() {
      return cluster().op;
    },
    stop: () => cluster().stop(),
  };
}
