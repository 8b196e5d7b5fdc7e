/**
 * Failover at fleet size (issue 17), against a REAL kube-apiserver: N registered Nodes, one
 * LVMNodeSet selecting all, two operator processes electing a leader (as LvmSystem runs them), the
 * agents the real agent code over FakeNodes in this process. Once a quarter of the LVMNodes are
 * Ready (the leader mid-reconcile), the leader gets SIGKILL: no Lease release, so the standby must
 * wait out the lease (15 s) as it observes it.
 *
 *   npx tsx test/bench/operator-failover.bench.ts 500
 *
 * Per N: the LVMNodes Ready at the kill; kill → the standby leads, → its caches are synced (it
 * reconciles again), → every LVMNode Ready. Goal (issue 17): reconciling again < 20 s after the
 * kill. That no replica writes without the Lease is test/operator/leader-election.test.ts's
 * (the audit log), not measured here.
 */
import * as os from "node:os";
import { binariesAvailable, type Json } from "../env/cluster";
import { startFakeAgentCluster } from "../operator/fake-agent-cluster";
import { eventually, must, setsPath, sleep, volumeGroupNodeSet } from "../operator/env";
import { startOperatorProcess, type OperatorProcess } from "../operator/operator-process";

const NS = "storage";

export interface FailoverResult {
  readonly nodes: number;
  /** Set created → all Ready would have taken this long; here: → the kill. */
  readonly killAfterSeconds: number;
  readonly readyAtKill: number;
  /** Kill → the standby's "leading" log line. */
  readonly leadsAfterSeconds: number;
  /** Kill → the new leader's caches synced: it reconciles again. */
  readonly reconcilingAfterSeconds: number;
  /** Kill → every LVMNode Ready (the set's readyNodes = N and Ready True). */
  readonly allReadyAfterSeconds: number;
}

export async function measureFailover(n: number): Promise<FailoverResult> {
  const nodes = Array.from({ length: n }, (_, i) => `node-${String(i).padStart(4, "0")}`);
  const c = await startFakeAgentCluster({ nodes, namespaces: [NS], concurrency: 16 });
  const replicas: OperatorProcess[] = [];
  const start = (identity: string) => {
    const r = startOperatorProcess(c.cp, { identity, agentToken: c.agents.token });
    replicas.push(r);
    return r;
  };
  const status = async (): Promise<Json> => (await must(c.cp, "GET", setsPath(NS, "all"))).status ?? {};
  try {
    const a = start("op-a");
    await a.when("caches synced", 120_000);
    const b = start("op-b");
    await eventually(
      "op-b stands by (has read op-a's Lease)",
      async () => (await b.metrics()).includes('pulumi_lvm_operator_lease_holder{holder="op-a"} 1'),
      120_000,
      500,
    );
    const created = Date.now();
    await must(c.cp, "POST", setsPath(NS), volumeGroupNodeSet(NS, "all", { roles: ["storage"] }));
    const readyAtKill: number = await eventually(
      `a quarter of ${n} LVMNodes Ready`,
      async () => {
        const ready = (await status()).readyNodes ?? 0;
        return ready >= n / 4 ? ready : undefined;
      },
      600_000,
      100,
    );
    const killedAt = Date.now();
    a.child.kill("SIGKILL");
    const leads = await b.when("leading", 120_000);
    const synced = await eventually(
      "op-b: caches synced after it leads",
      async () => b.logs.find((l) => l.msg === "caches synced")?.seenAt,
      120_000,
      100,
    );
    const allReady = await eventually(
      `op-b: all ${n} LVMNodes Ready`,
      async () => {
        const s = await status();
        return s.readyNodes === n &&
          s.conditions?.some((x: Json) => x.type === "Ready" && x.status === "True")
          ? Date.now()
          : undefined;
      },
      900_000,
      250,
    );
    return {
      nodes: n,
      killAfterSeconds: (killedAt - created) / 1000,
      readyAtKill,
      leadsAfterSeconds: (leads - killedAt) / 1000,
      reconcilingAfterSeconds: (synced - killedAt) / 1000,
      allReadyAfterSeconds: (allReady - killedAt) / 1000,
    };
  } finally {
    for (const r of replicas) {
      r.child.kill("SIGTERM");
      await Promise.race([r.exited, sleep(30_000)]);
      r.cleanup();
    }
    await c.stop();
  }
}

/** `npm run bench`'s part: the sizes in PULUMI_LVM_BENCH_FAILOVER_NODES (default 500). */
export async function runOperatorFailoverBench(sizes: readonly number[]): Promise<number> {
  if (!binariesAvailable()) {
    console.error(
      "operator failover: kube-apiserver and etcd are missing: run bash test/env/install.sh first",
    );
    return 1;
  }
  for (const n of sizes) {
    const r = await measureFailover(n);
    console.log(
      JSON.stringify({
        bench: "operator failover",
        ...r,
        loadAverage: os.loadavg().map((x) => +x.toFixed(2)),
      }),
    );
  }
  return 0;
}

if (require.main === module) {
  const sizes = process.argv.slice(2).map(Number);
  void runOperatorFailoverBench(sizes.length ? sizes : [500]).then(
    (code) => (process.exitCode = code),
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
}
