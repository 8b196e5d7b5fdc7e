/**
 * The operator at rest with many nodes, against a REAL kube-apiserver: its API request rate once
 * everything is in sync (at a 30 s resync) and the size of the LVMNodeSet's status.
 *
 *   npx tsx test/bench/operator-idle.bench.ts 200 1000
 *
 * The agents are stand-ins (named so): one HTTP listener per node answering /v1/plan with an empty
 * plan and /v1/status with Ready, for that node. Their behaviour does not matter here; the
 * operator's requests to the API server do. Agent pods are API objects whose status the bench
 * writes (no kubelet), at 127.0.0.1 and each node's own port.
 */
import type { RequestRecord } from "../../src/kube/client";
import { startControlPlane, type ControlPlane, type Json } from "../env/cluster";
import { createAgentServiceAccount, registerAgentNodes } from "../operator/agent-pods";
import {
  eventually,
  must,
  nodeSet,
  plainHttpAgents,
  prepareCluster,
  setsPath,
  sleep,
  startTestOperator,
} from "../operator/env";
import { standInAgents } from "../support/agent/stand-in-agents";

const RESYNC_MS = 30_000;
const WINDOW_MS = 2 * RESYNC_MS;
const NS = "storage";

async function measure(
  cp: ControlPlane,
  count: number,
): Promise<{ perMin: number; statusBytes: number; byKind: Record<string, number> }> {
  const nodes = Array.from({ length: count }, (_, i) => `bench-${count}-${String(i).padStart(4, "0")}`);
  const agents = await standInAgents(nodes);
  const role = `bench-${count}`;
  await createAgentServiceAccount(cp);
  await registerAgentNodes(cp, nodes, {
    portOf: (node) => agents.ports.get(node)!,
    labelsOf: () => ({ role }),
    image: "stand-in",
  });
  const op = startTestOperator(cp, cp.url, {
    agents: plainHttpAgents(async () => "stand-in"),
    resyncMs: RESYNC_MS,
  });
  const setName = `idle-${count}`;
  try {
    await eventually("caches synced", async () => op.operator.ready, 60_000);
    await must(cp, "POST", setsPath(NS), nodeSet(NS, setName, [role]));
    await eventually(
      `the set ${setName} Ready with ${count} nodes`,
      async () => (await must(cp, "GET", setsPath(NS, setName))).status?.state === "Ready",
      600_000,
      1000,
    );
    // One full resync after Ready, so that every first-time write is behind us.
    await sleep(RESYNC_MS + 5000);
    const from = op.requests.length;
    await sleep(WINDOW_MS);
    const window: RequestRecord[] = op.requests.slice(from);
    const byKind: Record<string, number> = {};
    for (const r of window) byKind[`${r.verb} ${r.resource}`] = (byKind[`${r.verb} ${r.resource}`] ?? 0) + 1;
    const set: Json = await must(cp, "GET", setsPath(NS, setName));
    return {
      perMin: Math.round((window.length * 60_000) / WINDOW_MS),
      statusBytes: Buffer.byteLength(JSON.stringify(set.status)),
      byKind,
    };
  } finally {
    await op.stop();
    agents.close();
  }
}

export async function runOperatorIdleBench(sizes: readonly number[]): Promise<number> {
  // A fresh control plane per size: "N registered Nodes" means exactly N.
  for (const count of sizes) {
    const cp = await startControlPlane();
    try {
      await prepareCluster(cp);
      await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
      const r = await measure(cp, count);
      console.log(
        JSON.stringify({
          bench: "operator idle",
          nodes: count,
          resyncSeconds: RESYNC_MS / 1000,
          requestsPerMinute: r.perMin,
          setStatusBytes: r.statusBytes,
          requestsInWindowByKind: r.byKind,
        }),
      );
    } finally {
      await cp.stop();
    }
  }
  return 0;
}

if (require.main === module) {
  const sizes = process.argv.slice(2).map(Number);
  void runOperatorIdleBench(sizes.length ? sizes : [200, 1000]).then(
    (code) => (process.exitCode = code),
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
