import { controllerReference } from "./ownership";
import { mandateOf, teardownOf, type MandateView } from "./mandate";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "./types";

const TEMPLATE = {
  volumeGroups: [
    {
      name: "vg1",
      deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }] },
    },
  ],
};

function set(
  namespace: string,
  name: string,
  o: { roles?: string[]; created?: string; deletionPolicy?: "Delete" | "Retain" } = {},
): LVMNodeSetObject {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: {
      name,
      namespace,
      uid: `uid-${namespace}-${name}`,
      creationTimestamp: o.created ?? "2044-01-01T00:00:00Z",
    },
    spec: {
      nodeSelector: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: "role", operator: "In", values: o.roles ?? ["storage"] }] },
        ],
      },
      template: { ...TEMPLATE, ...(o.deletionPolicy ? { deletionPolicy: o.deletionPolicy } : {}) },
    },
  } as unknown as LVMNodeSetObject;
}

function lvmNode(
  owner: LVMNodeSetObject | undefined,
  o: { name?: string; namespace?: string; spec?: unknown; created?: string; reported?: boolean } = {},
): LVMNodeObject {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNode",
    metadata: {
      name: o.name ?? "n1",
      namespace: o.namespace ?? owner?.metadata.namespace ?? "storage",
      ...(o.created ? { creationTimestamp: o.created } : {}),
      ...(owner ? { ownerReferences: [controllerReference(owner)] } : {}),
    },
    spec: (o.spec ?? owner?.spec.template ?? TEMPLATE) as LVMNodeObject["spec"],
    ...(o.reported ? { status: { volumeGroups: [{ name: "vg1" }] } } : {}),
  } as unknown as LVMNodeObject;
}

const NODES: Record<string, NodeObject> = {
  n1: { metadata: { name: "n1", labels: { role: "storage" } } },
  n3: { metadata: { name: "n3", labels: { role: "compute" } } },
  gone: {
    metadata: { name: "gone", labels: { role: "storage" }, deletionTimestamp: "2044-01-02T00:00:00Z" },
  },
};
const view = (sets: LVMNodeSetObject[], lvmNodes: LVMNodeObject[] = []): MandateView => ({
  sets,
  lvmNodes,
  node: (name) => NODES[name],
});

const fast = set("storage", "fast", { deletionPolicy: "Delete" });
const kept = set("storage", "kept");
// Older than fast, and widened later onto fast's nodes.
const old = set("tenant-b", "old", { created: "2043-01-01T00:00:00Z" });

describe("mandateOf: only an LVMNode its set made for a node it selects is driven", () => {
  test.each([
    ["its set's LVMNode of a selected node, spec = template", lvmNode(fast), [fast], [], "ok"],
    ["no controller (hand-made)", lvmNode(undefined), [fast], [], "NotManaged"],
    [
      "its set is not one the operator reconciles (another uid)",
      lvmNode(set("storage", "gone")),
      [fast],
      [],
      "NotManaged",
    ],
    [
      "the genuine reference of a set that does not select the node",
      lvmNode(fast, { name: "n3" }),
      [fast],
      [],
      "NotSelected",
    ],
    ["a Node that does not exist", lvmNode(fast, { name: "n9" }), [fast], [], "NotSelected"],
    ["a Node being deleted", lvmNode(fast, { name: "gone" }), [fast], [], "NotSelected"],
    [
      "a spec that is not the template (a deletionPolicy edit)",
      lvmNode(kept, { spec: { ...TEMPLATE, deletionPolicy: "Delete" } }),
      [kept],
      [],
      "SpecNotTemplate",
    ],
    [
      "a spec that is not the template (another volume group)",
      lvmNode(fast, { spec: { volumeGroups: [{ ...TEMPLATE.volumeGroups[0], name: "mine" }] } }),
      [fast],
      [],
      "SpecNotTemplate",
    ],
    [
      "an older set's LVMNode created later: the one there first keeps the node",
      lvmNode(fast, { created: "2044-02-01T00:00:00Z" }),
      [fast, old],
      [lvmNode(old, { created: "2044-03-01T00:00:00Z" })],
      "ok",
    ],
    [
      "the older set's later LVMNode is the one not driven",
      lvmNode(old, { created: "2044-03-01T00:00:00Z" }),
      [fast, old],
      [lvmNode(fast, { created: "2044-02-01T00:00:00Z" })],
      "NodeSetOverlap",
    ],
    [
      "two LVMNodes in the same second: the older set's",
      lvmNode(fast, { created: "2044-02-01T00:00:00Z" }),
      [fast, old],
      [lvmNode(old, { created: "2044-02-01T00:00:00Z" })],
      "NodeSetOverlap",
    ],
    [
      "a rival LVMNode whose set the operator does not reconcile does not count",
      lvmNode(fast, { created: "2044-02-01T00:00:00Z" }),
      [fast],
      [lvmNode(old, { created: "2043-02-01T00:00:00Z" })],
      "ok",
    ],
  ])("%s", (_what, node, sets, others, expected) => {
    const m = mandateOf(node, view(sets, [node, ...others]));
    expect(m.ok ? "ok" : m.reason).toBe(expected);
  });

  test("the messages name the node, the set and what happens next", () => {
    const m = mandateOf(lvmNode(fast, { name: "n3" }), view([fast]));
    expect(m).toEqual({
      ok: false,
      reason: "NotSelected",
      message:
        "node n3 is not selected by LVMNodeSet storage/fast (its nodeSelector does not match the Node, or the Node is gone); nothing is sent to the node's agent for storage/n3, and the set deletes it once the node has been out of its selector for the deselection grace",
    });
    const rival = lvmNode(fast, { created: "2044-02-01T00:00:00Z" });
    expect(
      mandateOf(lvmNode(old, { created: "2044-03-01T00:00:00Z" }), view([fast, old], [rival])),
    ).toMatchObject({
      message:
        "node n1 is also selected by LVMNodeSet storage/fast (LVMNode storage/n1), which keeps it (its LVMNode was there first); nothing is sent to the node's agent for tenant-b/n1 until the sets no longer overlap",
    });
  });
});

describe("teardownOf: the set's deletionPolicy, for what the operator drove", () => {
  test.each([
    ["Delete set, its LVMNode of a selected node", lvmNode(fast), [fast], [], true, "Delete", false],
    [
      "Retain set, the LVMNode's spec edited to Delete",
      lvmNode(kept, { spec: { ...TEMPLATE, deletionPolicy: "Delete" } }),
      [kept],
      [],
      false,
      "Retain",
      false,
    ],
    ["Retain set", lvmNode(kept), [kept], [], false, "Retain", false],
    [
      "Delete set, a spec that is not its template",
      lvmNode(fast, { spec: { ...TEMPLATE, deletionPolicy: "Delete", volumeGroups: [] } }),
      [fast],
      [],
      false,
      "Delete",
      true,
    ],
    [
      "Delete set, a node it never selected, never driven (a forged LVMNode)",
      lvmNode(fast, { name: "n3" }),
      [fast],
      [],
      false,
      "Delete",
      true,
    ],
    [
      "Delete set, a node deselected after the agent reported its volume groups",
      lvmNode(fast, { name: "n3", reported: true }),
      [fast],
      [],
      true,
      "Delete",
      false,
    ],
    [
      "Delete set, the Node gone: nothing to tear down, not a refusal",
      lvmNode(fast, { name: "n9", reported: true }),
      [fast],
      [],
      false,
      "Delete",
      false,
    ],
    [
      "no controller, Delete claimed",
      lvmNode(undefined, { spec: { ...TEMPLATE, deletionPolicy: "Delete" } }),
      [fast],
      [],
      false,
      "Delete",
      true,
    ],
    ["no controller, Retain", lvmNode(undefined), [fast], [], false, "Retain", false],
    [
      "the LVMNode that does not hold the node",
      lvmNode(set("tenant-b", "x", { deletionPolicy: "Delete", created: "2043-01-01T00:00:00Z" }), {
        created: "2044-03-01T00:00:00Z",
      }),
      [fast, set("tenant-b", "x", { deletionPolicy: "Delete", created: "2043-01-01T00:00:00Z" })],
      [lvmNode(fast, { created: "2044-02-01T00:00:00Z" })],
      false,
      "Delete",
      true,
    ],
  ])("%s", (_what, node, sets, others, tearDown, policy, refused) => {
    const t = teardownOf(node, view(sets, [node, ...others]));
    expect([t.tearDown, t.policy, t.why !== undefined]).toEqual([tearDown, policy, refused]);
  });

  test("the refusal says why", () => {
    expect(teardownOf(lvmNode(fast, { name: "n3" }), view([fast])).why).toBe(
      "node n3 is not selected by LVMNodeSet storage/fast and its agent never reported a volume group for this LVMNode; nothing on node n3 is torn down",
    );
  });
});
