/**
 * The LVMNodeSet reconciler against a real kube-apiserver (+ kube-controller-manager), with the CRDs
 * from deploy/crds, running as the "operator" identity with only the RBAC docs/operator.md lists.
 *
 *   npx jest test/operator/reconcile --selectProjects integration
 */
import { ControlPlane, Json, startControlPlane } from "../env/cluster";
import {
  canonical,
  eventually,
  lvmNodes,
  lvmNodesPath,
  must,
  nodeSet,
  prepareCluster,
  settled,
  setsPath,
  sleep,
  startTestOperator,
  type TestOperator,
} from "./env";

jest.setTimeout(60_000);

let cp: ControlPlane;
let op: TestOperator;
const NS = "storage";

beforeAll(async () => {
  cp = await startControlPlane({ controllerManager: true });
  await prepareCluster(cp);
  for (const ns of [NS, "team-b"])
    await must(cp, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns },
    });
  await cp.createNode("n1", { role: "storage" });
  await cp.createNode("n2", { role: "storage" });
  await cp.createNode("n3", { role: "compute" });
  op = startTestOperator(cp);
  await eventually("caches synced", async () => op.operator.ready);
}, 120_000);

afterAll(async () => {
  await op?.stop();
  await cp?.stop();
});

const getSet = (name: string, ns = NS) => must(cp, "GET", setsPath(ns, name));
const condition = (set: Json, type = "LVMNodesReady") =>
  (set.status?.conditions ?? []).find((c: Json) => c.type === type);
const relabel = (node: string, role: string | null) =>
  must(cp, "PATCH", `/api/v1/nodes/${node}`, { metadata: { labels: { role } } });

describe("an LVMNodeSet selecting 2 of 3 nodes", () => {
  let set: Json;

  test("gets exactly 2 LVMNodes named after the nodes, owned by the set, with the template as spec", async () => {
    const t0 = Date.now();
    const created = await must(cp, "POST", setsPath(NS), nodeSet(NS, "fast", ["storage"]));
    const found = await eventually("2 LVMNodes", async () => {
      const m = await lvmNodes(cp, NS);
      return m.size === 2 ? m : undefined;
    });
    console.log(`set created -> 2 LVMNodes present in ${Date.now() - t0} ms`);
    expect([...found.keys()].sort()).toEqual(["n1", "n2"]);
    for (const o of found.values()) {
      expect(o.metadata.ownerReferences).toEqual([
        {
          apiVersion: "lvm.topolvm.io/v2alpha1",
          kind: "LVMNodeSet",
          name: "fast",
          uid: created.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      expect(o.spec).toEqual(created.spec.template);
    }
    set = await eventually("status written", async () => {
      const s = await getSet("fast");
      return s.status?.nodes?.length === 2 ? s : undefined;
    });
    expect(set.metadata.finalizers).toEqual(["lvm.topolvm.io/lvmnodes"]);
    expect(set.status).toMatchObject({
      state: "Pending",
      observedGeneration: 1,
      nodes: [
        { name: "n1", state: "Pending", message: "waiting for the node agent to report" },
        { name: "n2", state: "Pending", message: "waiting for the node agent to report" },
      ],
    });
    expect(condition(set)).toMatchObject({
      status: "False",
      reason: "LVMNodesNotReady",
      observedGeneration: 1,
      message: "0 of 2 LVMNodes are Ready; not yet: n1 (Pending), n2 (Pending)",
    });
  });

  test("a reconcile with nothing to do makes no write, and an idle operator makes none either", async () => {
    await settled(op);
    const before = op.writes().length;
    const rv = (await getSet("fast")).metadata.resourceVersion;
    const t0 = Date.now();
    expect(await op.operator.reconcileOne(`${NS}/fast`)).toBe("in_sync");
    console.log(`no-op reconcile: ${Date.now() - t0} ms, ${op.writes().length - before} writes`);
    await sleep(1000);
    expect(op.writes().length - before).toBe(0);
    expect((await getSet("fast")).metadata.resourceVersion).toBe(rv);
  });

  test("an LVMNode reporting Ready moves the set's status; lastTransitionTime moves only on a transition", async () => {
    const before = condition(await getSet("fast"));
    await sleep(1100); // transition times have whole seconds
    for (const n of ["n1", "n2"])
      await must(cp, "PATCH", `${lvmNodesPath(NS, n)}/status`, { status: { state: "Ready" } });
    const ready = await eventually("LVMNodesReady True", async () => {
      const s = await getSet("fast");
      return condition(s)?.status === "True" ? s : undefined;
    });
    expect(ready.status.state).toBe("Ready");
    expect(condition(ready)).toMatchObject({
      reason: "AllLVMNodesReady",
      message: "2 of 2 LVMNodes are Ready",
    });
    expect(condition(ready).lastTransitionTime).not.toBe(before.lastTransitionTime);
    await must(cp, "PATCH", `${lvmNodesPath(NS, "n1")}/status`, { status: { state: "Progressing" } });
    const progressing = await eventually("LVMNodesReady False again", async () => {
      const s = await getSet("fast");
      return condition(s)?.status === "False" ? s : undefined;
    });
    expect(progressing.status.state).toBe("Progressing");
    await must(cp, "PATCH", `${lvmNodesPath(NS, "n1")}/status`, { status: { state: "Ready" } });
    await eventually("Ready again", async () => condition(await getSet("fast"))?.status === "True");
  });

  test("relabelling a node into the set creates its LVMNode; out of it, deletes it", async () => {
    await relabel("n3", "storage");
    await eventually("LVMNode n3", async () => (await lvmNodes(cp, NS)).has("n3"));
    await relabel("n1", "compute");
    await eventually("LVMNode n1 gone", async () => !(await lvmNodes(cp, NS)).has("n1"));
    // The set's status lists only the nodes that are not Ready (n3, which has no agent); the Ready
    // ones (n2) are counted in the condition (a set over 5,000 nodes must stay far below etcd's limit).
    const s = await eventually("status counts n2, n3 and lists n3", async () => {
      const s = await getSet("fast");
      return condition(s)?.message === "1 of 2 LVMNodes are Ready; not yet: n3 (Pending)" ? s : undefined;
    });
    expect(s.status.nodes.map((n: Json) => n.name)).toEqual(["n3"]);
    await relabel("n1", "storage");
    await relabel("n3", "compute");
    await eventually(
      "back to n1, n2",
      async () => [...(await lvmNodes(cp, NS)).keys()].sort().join() === "n1,n2",
    );
  });

  test("a deleted Node loses its LVMNode", async () => {
    await cp.createNode("n4", { role: "storage" });
    await eventually("LVMNode n4", async () => (await lvmNodes(cp, NS)).has("n4"));
    await must(cp, "DELETE", "/api/v1/nodes/n4");
    await eventually("LVMNode n4 gone", async () => !(await lvmNodes(cp, NS)).has("n4"));
  });

  test("a changed template updates every LVMNode; a hand-edited LVMNode spec is put back", async () => {
    const s = await getSet("fast");
    const template = { ...s.spec.template, deletionPolicy: "Delete", deviceClasses: [] };
    // All at once: no agent drives these LVMNodes to Ready, which a staged rollout would wait for.
    await must(cp, "PATCH", setsPath(NS, "fast"), { spec: { template, rollout: { maxConcurrent: "100%" } } });
    await eventually("LVMNodes follow the template", async () => {
      const m = await lvmNodes(cp, NS);
      return [...m.values()].every((o) => canonical(o.spec) === canonical(template));
    });
    const after = await eventually("observedGeneration 2", async () => {
      const s2 = await getSet("fast");
      return condition(s2)?.observedGeneration === 2 && s2.status.observedGeneration === 2 ? s2 : undefined;
    });
    expect(after.status.observedGeneration).toBe(2);

    await must(cp, "PATCH", lvmNodesPath(NS, "n2"), {
      spec: { lvmd: { socketName: "/tmp/other.sock" }, deletionPolicy: "Retain" },
    });
    await eventually("n2 put back", async () => {
      const o = await must(cp, "GET", lvmNodesPath(NS, "n2"));
      return canonical(o.spec) === canonical(template);
    });
  });

  test("a second set over the same nodes gets a NodeSetOverlap condition and overwrites nothing", async () => {
    await settled(op);
    const before = await lvmNodes(cp, NS);
    await must(cp, "POST", setsPath(NS), nodeSet(NS, "overlap", ["storage"], "other-vg"));
    await must(cp, "POST", setsPath("team-b"), nodeSet("team-b", "elsewhere", ["storage"], "vg-b"));
    for (const [ns, name, owner] of [
      [NS, "overlap", `LVMNodeSet ${NS}/fast (LVMNode ${NS}/n1)`],
      ["team-b", "elsewhere", `LVMNodeSet ${NS}/fast (LVMNode ${NS}/n1)`],
    ] as const) {
      const s = await eventually(`${name}: NodeSetOverlap`, async () => {
        const s = await getSet(name, ns);
        return condition(s)?.reason === "NodeSetOverlap" ? s : undefined;
      });
      expect(condition(s).status).toBe("False");
      expect(condition(s).message).toContain(
        `node n1 is already managed by ${owner}; node sets must not overlap`,
      );
      expect(s.status.state).toBe("Degraded");
      expect(s.status.nodes.map((n: Json) => n.state)).toEqual(["Failed", "Failed"]);
    }
    await settled(op);
    const after = await lvmNodes(cp, NS);
    for (const [name, o] of before)
      expect(after.get(name)?.metadata.resourceVersion).toBe(o.metadata.resourceVersion);
    expect((await lvmNodes(cp, "team-b")).size).toBe(0);
    expect(op.logs.some((l) => l.msg === "conflict: node not managed" && l.nodeSet === `${NS}/overlap`)).toBe(
      true,
    );
  });

  test("a spec the API server accepts but the rules refuse gets InvalidSpec and changes nothing", async () => {
    const bad = nodeSet("team-b", "invalid", ["none"]);
    bad.spec.template.deviceClasses = [
      { name: "a", strategy: "Thick", volumeGroup: "vg1" },
      { name: "b", strategy: "Thick", volumeGroup: "vg1" },
    ];
    await must(cp, "POST", setsPath("team-b"), bad);
    const s = await eventually("InvalidSpec", async () => {
      const s = await getSet("invalid", "team-b");
      return condition(s)?.reason === "InvalidSpec" ? s : undefined;
    });
    expect(condition(s).message).toMatch(
      /^the spec is invalid; no LVMNode was changed: spec\.template\.deviceClasses/,
    );
    expect(s.status.state).toBe("Failed");
  });

  test("deleting the set runs the finalizer: LVMNodes deleted first (waiting for theirs), then the set goes", async () => {
    for (const name of ["overlap"]) await must(cp, "DELETE", setsPath(NS, name));
    await eventually(
      "overlap gone",
      async () => (await cp.request("GET", setsPath(NS, "overlap"))).status === 404,
    );
    // An LVMNode with a finalizer of its own (as the agent's teardown will have) holds the set.
    await must(cp, "PATCH", lvmNodesPath(NS, "n1"), { metadata: { finalizers: ["test/teardown"] } });
    await must(cp, "DELETE", setsPath(NS, "fast"));
    const terminating = await eventually("set Terminating, waiting for n1", async () => {
      const s = await getSet("fast");
      return s.status?.state === "Terminating" && s.status.nodes.length === 1 ? s : undefined;
    });
    expect(condition(terminating)).toMatchObject({
      reason: "Terminating",
      message: "waiting for 1 LVMNode(s) to be deleted: n1",
    });
    expect((await lvmNodes(cp, NS)).has("n2")).toBe(false);
    await must(cp, "PATCH", lvmNodesPath(NS, "n1"), { metadata: { finalizers: null } });
    await eventually("set gone", async () => (await cp.request("GET", setsPath(NS, "fast"))).status === 404);
    expect((await lvmNodes(cp, NS)).size).toBe(0);
  });

  test("with the first set gone, the set in another namespace takes the nodes", async () => {
    await eventually("team-b/elsewhere gets n1, n2", async () => (await lvmNodes(cp, "team-b")).size === 2);
    const s = await eventually("elsewhere no longer overlaps", async () => {
      const s = await getSet("elsewhere", "team-b");
      return condition(s)?.reason === "LVMNodesNotReady" ? s : undefined;
    });
    expect(s.status.nodes.map((n: Json) => n.name)).toEqual(["n1", "n2"]);
  });

  test("without the operator, the garbage collector still removes LVMNodes whose set is gone", async () => {
    await op.stop();
    const set = await getSet("elsewhere", "team-b");
    await must(cp, "PATCH", setsPath("team-b", "elsewhere"), {
      metadata: { finalizers: null, resourceVersion: set.metadata.resourceVersion },
    });
    await must(cp, "DELETE", setsPath("team-b", "elsewhere"));
    await eventually(
      "GC deleted the LVMNodes",
      async () => (await lvmNodes(cp, "team-b")).size === 0,
      30_000,
    );
  });
});
