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
 * RSS (now and peak); how many LVMNodes hold a plan waiting for approval under the default policy
 * Destructive (none should). Goals: 500 nodes Ready < 60 s, a no-op resync of 500 makes 0
 * writes, RSS < 200 MiB at 1,000 nodes, requests per node O(1).
 */
import * as os from "node:os";
import { binariesAvailable, type Json } from "../env/cluster";
import { startFakeAgentCluster } from "../operator/fake-agent-cluster";
import { eventually, lvmNodes, must, setsPath, sleep } from "../operator/env";
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

/** Writes (not the Lease's) by "VERB resource". */
function byKind(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const line of metrics.split("\n")) {
    const m =
      /^pulumi_lvm_operator_api_requests_total\{verb="(CREATE|PATCH|DELETE)",resource="([^"]+)",code="[^"]*"\} (\S+)$/.exec(
        line,
      );
    if (m && m[2] !== "leases") out[`${m[1]} ${m[2]}`] = (out[`${m[1]} ${m[2]}`] ?? 0) + Number(m[3]);
  }
  return out;
}
function diff(a: Record<string, number>, b: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(a)
      .map(([k, v]) => [k, v - (b[k] ?? 0)])
      .filter(([, v]) => v !== 0),
  );
}

/**
 * The first resync after `from` in the agents' request times: plan calls come in bursts (a resync
 * queues every LVMNode at once), bursts `RESYNC_S` apart; the first burst after `from` that plans
 * every node, and when its last call (plan or status) came. undefined until there is one.
 */
function resyncBurst(
  agents: ReadonlyArray<{ readonly requests: readonly string[]; readonly times: readonly number[] }>,
  from: number,
  n: number,
): { start: number; end: number } | undefined {
  const plans = agents
    .flatMap((a) => a.times.filter((t, i) => t > from && a.requests[i] === "POST /v1/plan"))
    .sort((x, y) => x - y);
  // Split at gaps of more than a third of the resync period.
  let start = 0;
  for (let i = 1; i <= plans.length; i++) {
    if (i < plans.length && plans[i]! - plans[i - 1]! <= (RESYNC_S * 1000) / 3) continue;
    if (i - start >= n) {
      const first = plans[start]!;
      const lastPlan = plans[i - 1]!;
      if (Date.now() - lastPlan < 5000) return undefined; // its status calls may still come
      const end = Math.max(
        ...agents.flatMap((a) => a.times.filter((t) => t >= first && t <= lastPlan + 5000)),
      );
      return { start: first, end };
    }
    start = i;
  }
  return undefined;
}

export interface ScaleResult {
  readonly nodes: number;
  readonly approvalPolicy: "Destructive";
  /** LVMNodes holding a plan that waits for approval after the no-op resync. */
  readonly pendingApprovals: number;
  readonly registerSeconds: number;
  readonly readySeconds: number;
  readonly requestsPerNodeToReady: number;
  readonly writesPerNodeToReady: number;
  /** Set created → the operator's last write of the convergence (Applied → InSync). */
  readonly settledSeconds: number;
  readonly noopResync: {
    readonly seconds: number;
    readonly writes: number;
    readonly writesByKind: Record<string, number>;
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
          // The default, named: every node's first plan builds a group on a blank device, which
          // does not wait; the line says how many plans waited anyway (pendingApprovals).
          approvalPolicy: "Destructive",
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
    // The LVMNodes' Applied → InSync writes follow Ready: wait until no write for 10 s, then watch
    // one full resync (every node planned once, in one burst).
    let last = writes(atReady);
    let since = Date.now();
    await eventually(
      "the operator settles (no write for 10 s)",
      async () => {
        const w = writes(await op.metrics());
        if (w !== last) [last, since] = [w, Date.now()];
        return Date.now() - since >= 10_000;
      },
      600_000,
      1000,
    );
    const settledSeconds = (since - created) / 1000;
    const quietFrom = Date.now();
    const quiet = await op.metrics();
    const burst = await eventually(
      "a resync planned every node",
      async () => resyncBurst([...c.agents.agents.values()], quietFrom, n),
      (2 * RESYNC_S + 600) * 1000,
      1000,
    );
    await sleep(3000);
    const after = await op.metrics();
    const pendingApprovals = [...(await lvmNodes(c.cp, NS)).values()].filter(
      (node) => node.status?.pendingApproval !== undefined,
    ).length;
    const rss = op.rss();
    return {
      nodes: n,
      approvalPolicy: "Destructive",
      pendingApprovals,
      registerSeconds,
      readySeconds,
      requestsPerNodeToReady: +((requests(atReady) - requests(before)) / n).toFixed(2),
      writesPerNodeToReady: +((writes(atReady) - writes(before)) / n).toFixed(2),
      settledSeconds,
      noopResync: {
        seconds: (burst.end - burst.start) / 1000,
        writes: writes(after) - writes(quiet),
        writesByKind: diff(byKind(after), byKind(quiet)),
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
