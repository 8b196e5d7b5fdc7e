/**
 * The operator at fleet size (issue 17), against a REAL kube-apiserver: N registered Nodes, one
 * LVMNodeSet selecting all of them, the operator as its own process (`pulumi-lvm operator`, leader
 * election on, as LvmSystem runs it) and the agents the real agent code over FakeNodes, all N in
 * this process (test/support/agent/fake-agents.ts): the figures are the operator's and the API
 * server's, not 500 agent processes'.
 *
 *   npx tsx test/bench/operator-scale.bench.ts 50 100 500
 *
 * Per N: set created → every LVMNode Ready (the set's readyNodes = N and its Ready condition); the
 * API requests per node that took; one no-op resync (its duration from the first plan call to the
 * last status call, its API writes other than the Lease's, and requests per node); the operator's
 * RSS (now and peak). Goals (issue 17): 500 nodes Ready < 60 s, a no-op resync of 500 makes 0
 * writes, RSS < 200 MiB at 1,000 nodes, requests per node O(1).
 */
import * as os from "node:os";
import { binariesAvailable, type Json } from "../env/cluster";
import { startFakeAgentCluster } from "../operator/fake-agent-cluster";
import { eventually, must, setsPath, sleep } from "../operator/env";
import { startOperatorProcess } from "../operator/operator-process";

const NS = "storage";
const RESYNC_S = 60;

/** Sums a counter of the operator's /metrics whose labels match `filter`. */
function sum(metrics: string, name: string, filter: (labels: string) => boolean = () => true): number {
  let total = 0;
  for (const line of metrics.split("\n")) {
    const m = new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`).exec(line);
    if (m && filter(m[1]!)) total += Number(m[2]);
  }
  return total;
}
const requests = (m: string) =>
  sum(m, "pulumi_lvm_operator_api_requests_total", (l) => !l.includes('resource="leases"'));
const writes = (m: string) =>
  sum(
    m,
    "pulumi_lvm_operator_api_requests_total",
    (l) => /verb="(CREATE|PATCH|DELETE)"/.test(l) && !l.includes('resource="leases"'),
  );

export interface ScaleResult {
  readonly nodes: number;
  readonly registerSeconds: number;
  readonly readySeconds: number;
  readonly requestsPerNodeToReady: number;
  readonly writesPerNodeToReady: number;
  readonly noopResync: {
    readonly seconds: number;
    readonly writes: number;
    readonly requestsPerNode: number;
  };
  readonly rssMiB: { readonly now: number; readonly peak: number };
}

export async function measureScale(n: number): Promise<ScaleResult> {
  const nodes = Array.from({ length: n }, (_, i) => `node-${String(i).padStart(4, "0")}`);
  const t0 = Date.now();
  const c = await startFakeAgentCluster({ nodes, namespaces: [NS], concurrency: 16 });
  const registerSeconds = (Date.now() - t0) / 1000;
  const op = startOperatorProcess(c.cp, {
    identity: "bench",
    agentToken: c.agents.token,
    args: ["--resync", `${RESYNC_S}s`],
  });
  try {
    await op.when("caches synced", 120_000);
    const before = await op.metrics();
    const created = Date.now();
    await must(c.cp, "POST", setsPath(NS), {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: { name: "all", namespace: NS },
      spec: {
        template: {
          volumeGroups: [
            {
              name: "vg1",
              deviceSelector: {
                deviceSelectorTerms: [
                  { matchExpressions: [{ key: "path", operator: "In", values: ["/dev/vdb"] }] },
                ],
              },
            },
          ],
        },
      },
    });
    await eventually(
      `all ${n} LVMNodes Ready`,
      async () => {
        const s: Json = (await must(c.cp, "GET", setsPath(NS, "all"))).status;
        return (
          s?.readyNodes === n && s.conditions?.some((x: Json) => x.type === "Ready" && x.status === "True")
        );
      },
      900_000,
      250,
    );
    const readySeconds = (Date.now() - created) / 1000;
    const atReady = await op.metrics();
    // The LVMNodes' Applied → InSync writes follow Ready; let them land, then watch one full resync.
    await sleep(5000);
    const quietFrom = Date.now();
    const quiet = await op.metrics();
    const planned = (since: number) =>
      [...c.agents.agents.values()].map((a) =>
        a.times.filter((t, i) => t > since && a.requests[i] === "POST /v1/plan"),
      );
    await eventually(
      "a resync planned every node",
      async () => planned(quietFrom).every((p) => p.length > 0),
      (RESYNC_S + 120) * 1000,
      500,
    );
    await eventually(
      "the resync's status calls done",
      async () => {
        const lastPlan = Math.max(...planned(quietFrom).map((p) => p[0]!));
        return Date.now() - lastPlan > 3000;
      },
      120_000,
      500,
    );
    const firstPlan = Math.min(...planned(quietFrom).map((p) => p[0]!));
    const lastCall = Math.max(
      ...[...c.agents.agents.values()].map((a) => Math.max(...a.times.filter((t) => t >= firstPlan))),
    );
    const after = await op.metrics();
    const rss = op.rss();
    return {
      nodes: n,
      registerSeconds,
      readySeconds,
      requestsPerNodeToReady: +((requests(atReady) - requests(before)) / n).toFixed(2),
      writesPerNodeToReady: +((writes(atReady) - writes(before)) / n).toFixed(2),
      noopResync: {
        seconds: (lastCall - firstPlan) / 1000,
        writes: writes(after) - writes(quiet),
        requestsPerNode: +((requests(after) - requests(quiet)) / n).toFixed(2),
      },
      rssMiB: { now: Math.round(rss.now / 2 ** 20), peak: Math.round(rss.peak / 2 ** 20) },
    };
  } finally {
    op.child.kill("SIGTERM");
    await Promise.race([op.exited, sleep(30_000)]);
    op.cleanup();
    await c.stop();
  }
}

/** `npm run bench`'s part: the sizes in PULUMI_LVM_BENCH_NODES (default 50,100,500). */
export async function runOperatorScaleBench(sizes: readonly number[]): Promise<number> {
  if (!binariesAvailable()) {
    console.error("operator scale: kube-apiserver and etcd are missing: run bash test/env/install.sh first");
    return 1;
  }
  for (const n of sizes) {
    const r = await measureScale(n);
    console.log(
      JSON.stringify({ bench: "operator scale", ...r, loadAverage: os.loadavg().map((x) => +x.toFixed(2)) }),
    );
  }
  return 0;
}

if (require.main === module) {
  const sizes = process.argv.slice(2).map(Number);
  void runOperatorScaleBench(sizes.length ? sizes : [50, 100, 500]).then(
    (code) => (process.exitCode = code),
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
