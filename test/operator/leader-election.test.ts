/**
 * Leader election with real operator PROCESSES against a REAL kube-apiserver (issue 17): the
 * leader is killed with SIGKILL in the middle of a reconcile (applies in flight on the agents), the
 * standby takes over and converges; later the new leader gets SIGTERM and a third replica takes
 * over at once (the Lease is released). kube-apiserver's audit log names the replica of every
 * request (its User-Agent), and every write is checked against the Lease's holder at that moment.
 * The agents are the real agent code over FakeNodes (each lvm command takes 1 s), in this process.
 *
 *   npx jest test/operator/leader-election --selectProjects integration --runInBand
 */
import type { Json } from "../env/cluster";
import { AuditLog, isLeaseWrite, replicaOf, WRITE_VERBS, writesWithoutLease } from "./audit";
import { AGENT_NAMESPACE, eventually, lvmNodes, must, setsPath, volumeGroupNodeSet } from "./env";
import { useFakeAgentCluster } from "./fake-agent-cluster";
import { startOperatorProcess, type OperatorProcess } from "./operator-process";

jest.setTimeout(420_000);

const NS = "storage";
const NODES = Array.from({ length: 20 }, (_, i) => `n${String(i).padStart(2, "0")}`);
const SPARE = "spare";
const LEASE = "pulumi-lvm-operator";
const audit = new AuditLog();
const replicas: OperatorProcess[] = [];
const c = useFakeAgentCluster(
  {
    nodes: [...NODES, SPARE],
    namespaces: [NS],
    commandDelayMs: 1000,
    labelsOf: (node): Record<string, string> => (node === SPARE ? {} : { role: "storage" }),
    controlPlane: { apiserverFlags: audit.flags() },
  },
  {
    beforeStop: () => {
      for (const r of replicas) r.cleanup();
    },
    afterStop: () => audit.cleanup(),
  },
);

const start = (identity: string) => {
  const r = startOperatorProcess(c.cp, { identity, agentToken: c.agents.token, args: ["--workers", "2"] });
  replicas.push(r);
  return r;
};
const set: Json = volumeGroupNodeSet(NS, "fast");
const setStatus = async () => (await must(c.cp, "GET", setsPath(NS, "fast"))).status ?? {};
const applies = () =>
  [...c.agents.agents.values()].reduce(
    (n, a) => n + a.requests.filter((r) => r === "POST /v1/apply").length,
    0,
  );

test("kill -9 of the leader mid-reconcile: the standby takes over and converges; SIGTERM: handed over at once; no write without the Lease", async () => {
  const a = start("op-a");
  await a.when("leading");
  const b = start("op-b");
  const bUrl = await b.url();
  // The standby answers its probes and says who leads.
  expect((await fetch(`${bUrl}/healthz`)).status).toBe(200);
  await eventually("standby ready", async () => (await fetch(`${bUrl}/readyz`)).status === 200);
  const standbyMetrics = await eventually("the standby has read the Lease", async () => {
    const m = await b.metrics();
    return m.includes('pulumi_lvm_operator_lease_holder{holder="op-a"} 1') ? m : undefined;
  });
  expect(standbyMetrics).toContain('pulumi_lvm_operator_leader{identity="op-b"} 0');
  expect(await a.metrics()).toContain('pulumi_lvm_operator_leader{identity="op-a"} 1');

  // Mid-reconcile: applies in flight (3 lvm commands of 1 s each per node), LVMNodes not all Ready.
  await must(c.cp, "POST", setsPath(NS), set);
  await eventually("applies in flight", async () => applies() >= 4, 60_000, 20);
  const readyAtKill = (await setStatus()).readyNodes ?? 0;
  const killedAt = Date.now();
  a.child.kill("SIGKILL");
  expect(readyAtKill).toBeLessThan(NODES.length);

  const bLeads = await b.when("leading", 60_000);
  const converged = await eventually(
    "op-b converges: every LVMNode Ready",
    async () => {
      const s = await setStatus();
      return s.readyNodes === NODES.length &&
        s.conditions?.some((x: Json) => x.type === "Ready" && x.status === "True")
        ? Date.now()
        : undefined;
    },
    180_000,
    200,
  );
  const firstWriteOfB = audit
    .events()
    .filter((e) => replicaOf(e) === "op-b" && WRITE_VERBS.has(e.verb) && !isLeaseWrite(e))
    .map((e) => Date.parse(e.requestReceivedTimestamp))
    .sort((x, y) => x - y)[0]!;
  console.log(
    `kill -9: ${readyAtKill} of ${NODES.length} Ready at the kill; op-b leads ${bLeads - killedAt} ms after it, ` +
      `writes ${firstWriteOfB - killedAt} ms after it, all Ready ${converged - killedAt} ms after it`,
  );
  expect(bLeads - killedAt).toBeLessThan(20_000); // lease 15 s + a retry
  expect((await lvmNodes(c.cp, NS)).size).toBe(NODES.length);

  // SIGTERM of the leader with a standby: handed over at the standby's next try.
  const cRep = start("op-c");
  await eventually("op-c standing by", async () => (await cRep.metrics()).includes('holder="op-b"'), 60_000);
  const termAt = Date.now();
  b.child.kill("SIGTERM");
  expect(await b.exited).toBe(0);
  expect(b.logs.some((l) => l.msg === "Lease released")).toBe(true);
  const cLeads = await cRep.when("leading", 30_000);
  console.log(`SIGTERM: op-b exits, op-c leads ${cLeads - termAt} ms after the signal`);
  expect(cLeads - termAt).toBeLessThan(10_000);
  // op-c reconciles: a node labelled now gets its LVMNode, Ready.
  await must(c.cp, "PATCH", `/api/v1/nodes/${SPARE}`, { metadata: { labels: { role: "storage" } } });
  await eventually(
    "op-c: the new node Ready",
    async () => (await setStatus()).readyNodes === NODES.length + 1,
    120_000,
    200,
  );

  // Writes per replica, and none from a replica without the Lease.
  const events = audit.events();
  const perReplica: Record<string, { writes: number; leaseWrites: number }> = {};
  for (const e of events) {
    const r = replicaOf(e);
    if (!r || !WRITE_VERBS.has(e.verb)) continue;
    perReplica[r] ??= { writes: 0, leaseWrites: 0 };
    if (isLeaseWrite(e)) perReplica[r].leaseWrites++;
    else perReplica[r].writes++;
  }
  console.log(`writes per replica (audit log): ${JSON.stringify(perReplica)}`);
  expect(perReplica["op-a"]?.writes).toBeGreaterThan(0);
  expect(perReplica["op-b"]?.writes).toBeGreaterThan(0);
  expect(perReplica["op-c"]?.writes).toBeGreaterThan(0);
  expect(writesWithoutLease(events, LEASE)).toEqual([]);
  // The Lease, as the API server has it.
  const lease = await must(
    c.cp,
    "GET",
    `/apis/coordination.k8s.io/v1/namespaces/${AGENT_NAMESPACE}/leases/${LEASE}`,
  );
  expect(lease.spec).toMatchObject({ holderIdentity: "op-c", leaseDurationSeconds: 15, leaseTransitions: 2 });
});

test("the check finds a write without the Lease (it can fail)", () => {
  const at = (s: number) => `2044-01-01T00:00:${String(s).padStart(2, "0")}.000000Z`;
  const lease = (holder: string, s: number) => ({
    verb: "patch",
    user: { username: "op" },
    userAgent: `pulumi-lvm-operator/1 (${holder || "x"})`,
    objectRef: { resource: "leases", name: LEASE },
    responseStatus: { code: 200 },
    requestObject: { spec: { holderIdentity: holder } },
    requestReceivedTimestamp: at(s),
    stageTimestamp: at(s),
  });
  const write = (replica: string, s: number) => ({
    verb: "patch",
    user: { username: "op" },
    userAgent: `pulumi-lvm-operator/1 (${replica})`,
    objectRef: { resource: "lvmnodes", name: "n1" },
    responseStatus: { code: 200 },
    requestReceivedTimestamp: at(s),
    stageTimestamp: at(s),
  });
  const events = [lease("a", 1), write("a", 2), lease("b", 20), write("a", 21), write("b", 22)];
  expect(writesWithoutLease(events, LEASE).map((v) => [v.replica, v.holder])).toEqual([["a", "b"]]);
});
