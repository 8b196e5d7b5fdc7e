import type { KubeObject } from "../../kube/client";
import { KubeApiError } from "../../kube/errors";
import { LVM_NODES, LVM_NODE_SETS, type Resource } from "../../kube/resources";
import { FakeKube } from "../../../test/support/kube/fake-kube";
import { ManualClock } from "../../../test/support/kube/manual-clock";
import { NodeSetReconciler } from "./reconciler";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";

const SET = {
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name: "fast", namespace: "storage", uid: "uid-fast", generation: 1 },
  spec: {
    nodeSelector: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: ["storage"] }] }],
    },
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
} as unknown as LVMNodeSetObject;

/** A FakeKube whose creates take a tick, counting how many are in flight at once. */
class CountingKube extends FakeKube {
  inFlight = 0;
  /** The creates in flight together, one entry per group that ran at once. */
  readonly together: number[] = [];
  private group = 0;
  refuse = new Set<string>();

  override async create<T extends KubeObject>(r: Resource, namespace: string, body: T): Promise<T> {
    this.inFlight++;
    this.group = Math.max(this.group, this.inFlight);
    await new Promise((resolve) => setImmediate(resolve));
    this.inFlight--;
    if (this.inFlight === 0) {
      this.together.push(this.group);
      this.group = 0;
    }
    if (this.refuse.has(body.metadata.name))
      throw new KubeApiError(
        "POST",
        `LVMNode ${namespace}/${body.metadata.name}`,
        403,
        "Forbidden",
        "exceeded quota",
      );
    return super.create(r, namespace, body);
  }
}

function setup(n: number, options: { lvmNodeFinalizer?: string } = {}) {
  const kube = new CountingKube();
  kube.put(LVM_NODE_SETS, SET);
  const nodes: NodeObject[] = Array.from({ length: n }, (_, i) => ({
    metadata: { name: `n${String(i).padStart(3, "0")}`, labels: { role: "storage" } },
  }));
  const logs: Array<Record<string, unknown>> = [];
  const reconciler = new NodeSetReconciler({
    kube,
    nodes: () => nodes,
    lvmNodes: () => [],
    clock: new ManualClock(),
    log: (e) => logs.push(e),
    ...options,
  });
  const lvmNode = (name: string) => kube.peek<LVMNodeObject>(LVM_NODES, "storage", name);
  return { kube, nodes, reconciler, logs, lvmNode };
}

describe("NodeSetReconciler: a new set's LVMNodes", () => {
  test("40 nodes: created in doubling batches (1, 2, 4, …), not one round trip after another", async () => {
    const t = setup(40);
    await expect(t.reconciler.reconcile("storage/fast")).resolves.toBe("changed");
    // before: [1, 1, 1, …] (40 creates in a row)
    expect(t.kube.together).toEqual([1, 2, 4, 8, 16, 9]);
    expect(t.kube.calls.filter((c) => c.verb === "CREATE")).toHaveLength(40);
    for (const { metadata } of t.nodes) expect(t.lvmNode(metadata.name)).toBeDefined();
    const status = t.kube.peek<LVMNodeSetObject>(LVM_NODE_SETS, "storage", "fast")!.status;
    expect(status).toMatchObject({ desiredNodes: 40, readyNodes: 0, failedNodes: 0 });
  });

  test("with the LVMNode reconciler's finalizer: every LVMNode is created carrying it (no GET and PATCH per node after); without: none", async () => {
    const driven = setup(3, { lvmNodeFinalizer: "lvm.topolvm.io/node-agent" });
    await driven.reconciler.reconcile("storage/fast");
    for (const { metadata } of driven.nodes)
      expect(driven.lvmNode(metadata.name)!.metadata.finalizers).toEqual(["lvm.topolvm.io/node-agent"]);
    const plain = setup(3);
    await plain.reconciler.reconcile("storage/fast");
    for (const { metadata } of plain.nodes)
      expect(plain.lvmNode(metadata.name)!.metadata.finalizers).toBeUndefined();
  });

  test("a create refused for one node: every other node still gets its LVMNode; the failure named in the status, thrown for a retry", async () => {
    const t = setup(10);
    t.kube.refuse.add("n000");
    await expect(t.reconciler.reconcile("storage/fast")).rejects.toThrow(
      /storage\/fast: n000: .*exceeded quota/,
    );
    expect(t.lvmNode("n000")).toBeUndefined();
    for (const { metadata } of t.nodes.slice(1)) expect(t.lvmNode(metadata.name)).toBeDefined();
    expect(t.logs).toContainEqual(
      expect.objectContaining({ msg: "write failed", node: "n000", action: "create" }),
    );
    const status = t.kube.peek<LVMNodeSetObject>(LVM_NODE_SETS, "storage", "fast")!.status;
    expect(status).toMatchObject({ desiredNodes: 10, failedNodes: 1 });
  });
});
