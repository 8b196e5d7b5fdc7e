/**
 * The operator driving REAL node agents (processes on loop devices) against a REAL kube-apiserver:
 * the agents authenticate the operator with TokenReview (audience pulumi-lvm-agent) and authorize
 * it with SubjectAccessReview (update on the node's LVMNode) against that API server; the operator
 * holds a TokenRequest token for its service account, read from a file as a projected volume is.
 * Agent pods exist as API objects (no kubelet: the test writes their status) whose pod IP and port
 * are where each agent listens; the operator calls them there directly, as in a cluster.
 *
 *   npx jest test/operator/agents --selectProjects integration
 */
import * as fs from "node:fs";
import { randomBytes } from "node:crypto";
import { agentClient } from "../../src/agent-client/agent-client";
import { tokenFromFile } from "../../src/operator/agents/token-file";
import { ControlPlane, Json, startControlPlane } from "../env/cluster";
import {
  commandLog,
  isWrite,
  lvm,
  membersOf,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  type AgentProcess,
} from "../agent/harness";
import {
  AGENT_NAMESPACE,
  eventually,
  lvmNodes,
  lvmNodesPath,
  must,
  prepareCluster,
  settled,
  setsPath,
  startTestOperator,
  type TestOperator,
} from "./env";
import { createAgentPod, createAgentServiceAccount, setAgentPodReady } from "./agent-pods";

jest.setTimeout(180_000);

const NS = "storage";
const NODES = ["n1", "n2"] as const;
type Node = (typeof NODES)[number];
const VG = `opr-${randomBytes(3).toString("hex")}`;
const RESYNC_MS = 4000;

let cp: ControlPlane;
let op: TestOperator;
const scratch = {} as Record<Node, Scratch>;
const agents = {} as Record<Node, AgentProcess>;

beforeAll(async () => {
  requireHostTier();
  cp = await startControlPlane();
  await prepareCluster(cp);
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  // The agents' identity delegates authentication and authorization (system:auth-delegator).
  await must(cp, "POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    metadata: { name: "agent-auth-delegator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "User", name: cp.identities.agent.username }],
  });
  await createAgentServiceAccount(cp);
  for (const node of NODES) {
    await cp.createNode(node, { role: "storage" });
    const s = (scratch[node] = new Scratch(`operator-${node}`));
    agents[node] = await startAgent({
      node,
      devices: [s.loop(), s.loop()],
      ...s.agentFiles(),
      // Each simulated node is a machine of its own (its /dev holds only its devices): every node
      // builds the set's volume group under the same name, which one machine's lvm refuses
      // (the agent's VolumeGroupNameTaken check sees the other node's group otherwise).
      ownMachine: true,
      auth: { kubeconfig: cp.kubeconfigFor("agent") },
      extraArgs: ["--namespace", NS],
    });
    await createAgentPod(cp, node, Number(new URL(agents[node].url).port));
  }
  // The operator's service account, and one static token for it that both agents accept (the
  // --agent-token-file mode; per-node tokens and TLS are test/operator/agent-trust.test.ts's).
  const [, , saNs, sa] = cp.identities.operator.username.split(":");
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: saNs } });
  await must(cp, "POST", `/api/v1/namespaces/${saNs}/serviceaccounts`, { metadata: { name: sa } });
  const tr = await must(cp, "POST", `/api/v1/namespaces/${saNs}/serviceaccounts/${sa}/token`, {
    spec: { audiences: NODES.map((n) => `pulumi-lvm-agent/${n}`), expirationSeconds: 3600 },
  });
  const tokenFile = scratch.n1.path("agent-token");
  fs.writeFileSync(tokenFile, tr.status.token, { mode: 0o600 });
  op = startTestOperator(cp, cp.url, {
    agents: {
      namespace: AGENT_NAMESPACE,
      client: agentClient(),
      token: tokenFromFile(tokenFile),
      tls: "plain-http",
    },
    resyncMs: RESYNC_MS,
  });
  await eventually("caches synced", async () => op.operator.ready);
}, 180_000);

afterAll(async () => {
  await op?.stop();
  for (const a of Object.values(agents)) await a.stop();
  await cp?.stop();
  for (const s of Object.values(scratch)) s.cleanup();
});

function nodeSet(name: string, deletionPolicy?: "Delete"): Json {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name, namespace: NS },
    spec: {
      nodeSelector: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: ["storage"] }] }],
      },
      template: {
        ...(deletionPolicy ? { deletionPolicy } : {}),
        volumeGroups: [
          {
            name: VG,
            minDeviceSize: "64Mi",
            deviceSelector: {
              deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
            },
          },
        ],
        deviceClasses: [{ name: `${VG}-thick`, strategy: "Thick", volumeGroup: VG, default: true }],
      },
    },
  };
}

// Sorted as the status's knames are compared (`.sort()`): /dev/loop10 sorts before /dev/loop9, and the
// loop numbers a run gets depend on what other tests on the machine hold.
const devices = (node: Node) => [...scratch[node].loops].sort();
const agentWrites = (node: Node) => commandLog(scratch[node].path("commands.jsonl")).filter(isWrite);
const agentRequests = (node: Node, path: string) =>
  agents[node].logs.filter((e) => e.msg === "request" && e.path === path);
const reconciled = (o: Json) => (o?.status?.conditions ?? []).find((c: Json) => c.type === "Reconciled");
const getNode = (node: Node) => cp.request("GET", lvmNodesPath(NS, node));

/** Both LVMNodes Ready with `n` included devices each and Reconciled=True. */
async function bothReady(n: number, ms = 60_000): Promise<Map<string, Json>> {
  return eventually(
    `both LVMNodes Ready with ${n} device(s)`,
    async () => {
      const m = await lvmNodes(cp, NS);
      const ok = NODES.every((node) => {
        const s = m.get(node)?.status;
        return (
          s?.state === "Ready" &&
          s.volumeGroups?.[0]?.devices?.included?.length === n &&
          reconciled(m.get(node))?.status === "True"
        );
      });
      return ok ? m : undefined;
    },
    ms,
    200,
  );
}

describe("the operator drives the node agents", () => {
  test("a set selecting 2 nodes: both agents build the volume group; both LVMNodes report it", async () => {
    const t0 = Date.now();
    await must(cp, "POST", setsPath(NS), nodeSet("fast"));
    await eventually(
      "both volume groups built",
      async () => NODES.every((n) => membersOf(devices(n), VG).length === 2),
      60_000,
      200,
    );
    const tBuilt = Date.now() - t0;
    const m = await bothReady(2);
    console.log(`set created -> VGs built ${tBuilt} ms, both LVMNodes Ready in status ${Date.now() - t0} ms`);
    for (const node of NODES) {
      expect(vgs(devices(node)).map((v) => v.vg_name)).toEqual([VG]);
      const o = m.get(node)!;
      expect(o.metadata.finalizers).toContain("lvm.topolvm.io/node-agent");
      expect(o.status.observedGeneration).toBe(o.metadata.generation);
      expect(o.status.volumeGroups[0].devices.included.map((d: Json) => d.kname).sort()).toEqual(
        devices(node),
      );
      expect(reconciled(o)).toMatchObject({ status: "True", observedGeneration: o.metadata.generation });
      expect(o.status.conditions.find((c: Json) => c.type === "VolumeGroupsHealthy")).toMatchObject({
        status: "True",
      });
      // Every call was authenticated as the operator's service account.
      const users = new Set(
        agents[node].logs
          .filter((e) => e.msg === "request" && String(e.path).startsWith("/v1/"))
          .map((e) => e.user),
      );
      expect([...users]).toEqual([cp.identities.operator.username]);
    }
    const set = await must(cp, "GET", setsPath(NS, "fast"));
    await eventually(
      "the set Ready",
      async () => (await must(cp, "GET", setsPath(NS, "fast"))).status?.state === "Ready",
    );
    expect(set.metadata.name).toBe("fast");
  });

  test("a no-op reconcile: zero API writes, zero agent writes, no apply", async () => {
    await settled(op, 1000);
    const writes = op.writes().length;
    const applies = NODES.map((n) => agentRequests(n, "/v1/apply").length);
    const lvmWrites = NODES.map((n) => agentWrites(n).length);
    const t0 = Date.now();
    for (const node of NODES) expect(await op.operator.reconcileLVMNode(`${NS}/${node}`)).toBe("in_sync");
    console.log(`no-op reconcile of 2 LVMNodes (plan + status on each agent): ${Date.now() - t0} ms`);
    // and a periodic resync on top
    await new Promise((r) => setTimeout(r, RESYNC_MS + 1500));
    expect(op.writes().length).toBe(writes);
    expect(NODES.map((n) => agentRequests(n, "/v1/apply").length)).toEqual(applies);
    expect(NODES.map((n) => agentWrites(n).length)).toEqual(lvmWrites);
  });

  test("out-of-band vgreduce on n1: the resync repairs it and the status shows it", async () => {
    const [, second] = devices("n1");
    lvm(devices("n1"), ["vgreduce", VG, second!]);
    expect(membersOf(devices("n1"), VG)).toHaveLength(1);
    const t0 = Date.now();
    // Repaired, and the agent's command log has the vgextend's end: lvm commits the volume group's
    // metadata before the process exits, and the agent records a command once it has exited, so the
    // VG can show 2 members while the log does not have it yet (CI of 2026-11-29 read the log in
    // between and failed).
    await eventually(
      "n1 repaired, the vgextend recorded by its agent",
      async () =>
        membersOf(devices("n1"), VG).length === 2 && agentWrites("n1").some((c) => c.tool === "vgextend"),
      RESYNC_MS * 4,
      200,
    );
    console.log(`vgreduce -> repaired by the resync in ${Date.now() - t0} ms (resync every ${RESYNC_MS} ms)`);
    const applied = agents.n1.logs.filter((e) => e.msg === "request" && e.path === "/v1/apply");
    expect(applied.length).toBeGreaterThan(0);
    expect(agentWrites("n1").some((c) => c.tool === "vgextend")).toBe(true);
    await bothReady(2);
  });

  test("n2's agent pod not Ready: a condition naming node and pod state; nothing else touched", async () => {
    await settled(op, 1000);
    const n1Before = (await getNode("n1")).body.metadata.resourceVersion;
    const lvmWrites = NODES.map((n) => agentWrites(n).length);
    const calls = NODES.map((n) => agents[n].logs.length);
    await setAgentPodReady(cp, "n2", false);
    const n2 = await eventually("n2 AgentUnavailable", async () => {
      const o = (await getNode("n2")).body;
      return reconciled(o)?.reason === "AgentUnavailable" ? o : undefined;
    });
    expect(reconciled(n2).message).toBe(
      `node n2: no agent pod on it is Running and Ready: ${AGENT_NAMESPACE}/agent-n2 (phase Running, Ready False: ContainersNotReady (readiness probe failed))`,
    );
    expect(n2.status.state).toBe("Degraded");
    expect(n2.status.volumeGroups[0].devices.included).toHaveLength(2); // the last report stays
    await new Promise((r) => setTimeout(r, 1500));
    expect((await getNode("n1")).body.metadata.resourceVersion).toBe(n1Before);
    expect(agents.n2.logs.slice(calls[1]).filter((e) => e.msg === "request")).toEqual([]);
    expect(NODES.map((n) => agentWrites(n).length)).toEqual(lvmWrites);
    await setAgentPodReady(cp, "n2", true);
    await bothReady(2);
  });

  test("deletionPolicy Retain: the LVMNodes go, the volume groups stay", async () => {
    await must(cp, "DELETE", setsPath(NS, "fast"));
    await eventually("set and LVMNodes gone", async () => {
      const gone = (await cp.request("GET", setsPath(NS, "fast"))).status === 404;
      return gone && (await lvmNodes(cp, NS)).size === 0;
    });
    for (const node of NODES) expect(membersOf(devices(node), VG)).toHaveLength(2);
    expect(NODES.every((n) => agentRequests(n, "/v1/teardown").length === 0)).toBe(true);
  });

  test("deletionPolicy Delete with a logical volume on n1: refused there (finalizer kept, LV named), torn down on n2", async () => {
    await must(cp, "POST", setsPath(NS), nodeSet("gone", "Delete"));
    await bothReady(2);
    // inactive, so no device-mapper is needed (this host has none)
    lvm(devices("n1"), ["lvcreate", "--driverloaded", "n", "-an", "-Zn", "-L", "8M", "-n", "data", VG]);
    await must(cp, "DELETE", setsPath(NS, "gone"));
    const n1 = await eventually("n1 TeardownRefused", async () => {
      const o = (await getNode("n1")).body;
      return reconciled(o)?.reason === "TeardownRefused" ? o : undefined;
    });
    expect(reconciled(n1).message).toContain(`logical volumes ${VG}/data remain`);
    expect(n1.metadata.finalizers).toContain("lvm.topolvm.io/node-agent");
    expect(n1.status.state).toBe("Terminating");
    await eventually(
      "n2 gone and its VG removed",
      async () => (await getNode("n2")).status === 404 && vgs(devices("n2")).length === 0,
    );
    expect(membersOf(devices("n1"), VG)).toHaveLength(2);
    // never forced: no teardown request carried force
    expect(agentWrites("n1").some((c) => c.tool === "vgremove")).toBe(false);
    // once the LV is removed, the retry tears down n1 as well
    lvm(devices("n1"), ["lvremove", "--driverloaded", "n", "-y", `${VG}/data`]);
    await eventually(
      "n1 gone and its VG removed",
      async () => (await getNode("n1")).status === 404 && vgs(devices("n1")).length === 0,
      30_000,
    );
    await eventually(
      "the set gone",
      async () => (await cp.request("GET", setsPath(NS, "gone"))).status === 404,
    );
  });

  test("metrics: agent calls by result and duration, LVMNodes by state", async () => {
    const text = await op.metrics.render(0, op.operator.lvmNodeGauges());
    expect(text).toMatch(/pulumi_lvm_operator_agent_calls_total\{call="plan",result="ok"\} \d+/);
    expect(text).toMatch(/pulumi_lvm_operator_agent_calls_total\{call="teardown",result="conflict"\} \d+/);
    expect(text).toContain("# TYPE pulumi_lvm_operator_agent_call_duration_seconds histogram");
    expect(text).toContain("# TYPE pulumi_lvm_operator_lvmnodes gauge");
  });
});
