import fc from "fast-check";
import { applyMergePatch } from "../../kube/merge-patch";
import { controllerReference } from "../ownership";
import { planFinalize, planNodeSet, type Action } from "./plan";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";

const template = {
  volumeGroups: [
    {
      name: "vg1",
      deviceSelector: {
        deviceSelectorTerms: [
          { matchExpressions: [{ key: "path" as const, operator: "In" as const, values: ["/dev/vdb"] }] },
        ],
      },
    },
  ],
};

function set(
  name: string,
  roles: string[],
  namespace = "storage",
  uid = `uid-${namespace}-${name}`,
): LVMNodeSetObject {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: { name, namespace, uid, generation: 1 },
    spec: {
      nodeSelector: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: roles }] }],
      },
      template,
    },
  };
}
const node = (name: string, role: string, deleting = false): NodeObject => ({
  metadata: { name, labels: { role }, ...(deleting ? { deletionTimestamp: "2044-01-01T00:00:00Z" } : {}) },
});
function lvmNode(
  name: string,
  owner: LVMNodeSetObject | undefined,
  namespace = owner?.metadata.namespace ?? "storage",
  spec: LVMNodeObject["spec"] = template,
): LVMNodeObject {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNode",
    metadata: {
      name,
      namespace,
      uid: `lvmnode-${namespace}-${name}`,
      resourceVersion: "7",
      ...(owner ? { ownerReferences: [controllerReference(owner)] } : {}),
    },
    spec,
  };
}
const summary = (actions: readonly Action[]) => actions.map((a) => `${a.kind} ${a.node}`);

describe("planNodeSet", () => {
  const fast = set("fast", ["storage"]);
  const nodes = [node("n1", "storage"), node("n2", "storage"), node("n3", "compute")];

  test.each<[string, NodeObject[], LVMNodeObject[], string[], string[]]>([
    ["nothing yet: one LVMNode per selected node", nodes, [], ["create n1", "create n2"], []],
    ["all there: nothing", nodes, [lvmNode("n1", fast), lvmNode("n2", fast)], [], []],
    [
      "a node left the selector: its LVMNode goes",
      nodes,
      [lvmNode("n1", fast), lvmNode("n2", fast), lvmNode("n3", fast)],
      ["delete n3"],
      [],
    ],
    [
      "a node being deleted is not selected",
      [node("n1", "storage"), node("n2", "storage", true)],
      [lvmNode("n1", fast), lvmNode("n2", fast)],
      ["delete n2"],
      [],
    ],
    [
      "a drifted spec is updated",
      nodes,
      [lvmNode("n1", fast), lvmNode("n2", fast, "storage", { ...template, deletionPolicy: "Delete" })],
      ["update n2"],
      [],
    ],
    [
      "another set's LVMNode in the namespace: conflict, untouched",
      nodes,
      [lvmNode("n1", set("other", ["storage"])), lvmNode("n2", fast)],
      [],
      ["n1"],
    ],
    ["a hand-made LVMNode: not adopted", nodes, [lvmNode("n1", undefined), lvmNode("n2", fast)], [], ["n1"]],
    [
      "another namespace's set has the node: conflict",
      nodes,
      [lvmNode("n1", set("b", ["storage"], "team-b")), lvmNode("n2", fast)],
      [],
      ["n1"],
    ],
    [
      "a set of the same name re-created (new uid): the old LVMNode is not ours",
      nodes,
      [lvmNode("n1", set("fast", ["storage"], "storage", "old-uid")), lvmNode("n2", fast)],
      [],
      ["n1"],
    ],
  ])("%s", (_what, nodeList, lvmNodes, actions, conflicts) => {
    const plan = planNodeSet(fast, nodeList, lvmNodes);
    expect(summary(plan.actions)).toEqual(actions);
    expect(plan.conflicts.map((c) => c.node)).toEqual(conflicts);
  });

  test("creates carry the template, the set's namespace and a controller reference", () => {
    const [create] = planNodeSet(fast, nodes, []).actions;
    expect(create).toEqual({
      kind: "create",
      node: "n1",
      object: {
        apiVersion: "lvm.topolvm.io/v2alpha1",
        kind: "LVMNode",
        metadata: { name: "n1", namespace: "storage", ownerReferences: [controllerReference(fast)] },
        spec: template,
      },
    });
  });

  test("an update is a merge patch guarded by the resourceVersion, removing what the template lacks", () => {
    const drifted = lvmNode("n1", fast, "storage", { ...template, lvmd: { socketName: "/x" } });
    const [update] = planNodeSet(fast, [node("n1", "storage")], [drifted]).actions;
    expect(update).toEqual({
      kind: "update",
      node: "n1",
      patch: { metadata: { resourceVersion: "7" }, spec: { lvmd: null } },
      specChange: true,
    });
  });

  test("with a template generation: creates carry it; a node with the template but not the generation is stamped without a spec change", () => {
    const same = lvmNode("n1", fast, "storage", template);
    const plan = planNodeSet(fast, [node("n1", "storage"), node("n2", "storage")], [same], 4);
    expect(plan.actions).toEqual([
      {
        kind: "update",
        node: "n1",
        specChange: false,
        patch: {
          metadata: { resourceVersion: "7", annotations: { "lvm.topolvm.io/template-generation": "4" } },
        },
      },
      expect.objectContaining({ kind: "create", node: "n2" }),
    ]);
    const created = plan.actions[1] as { object: { metadata: { annotations?: Record<string, string> } } };
    expect(created.object.metadata.annotations).toEqual({ "lvm.topolvm.io/template-generation": "4" });
  });

  test("conflict messages name the node, the other set and its LVMNode", () => {
    const plan = planNodeSet(fast, nodes, [lvmNode("n1", set("b", ["storage"], "team-b"))]);
    expect(plan.conflicts[0]!.message).toBe(
      "node n1 is already managed by LVMNodeSet team-b/b (LVMNode team-b/n1); node sets must not overlap",
    );
  });

  test("planFinalize deletes the set's LVMNodes that are not already going, and nothing else", () => {
    const going = {
      ...lvmNode("n2", fast),
      metadata: { ...lvmNode("n2", fast).metadata, deletionTimestamp: "2044-01-01T00:00:00Z" },
    };
    expect(summary(planFinalize(fast, [lvmNode("n1", fast), going, lvmNode("n3", set("x", ["a"]))]))).toEqual(
      ["delete n1"],
    );
  });
});

/* --------------------------------------------------------------------- properties ---- */

const names = ["n1", "n2", "n3", "n4", "n5"];
const roles = ["storage", "compute", "gpu"];
const world = fc.record({
  nodes: fc.uniqueArray(
    fc.record({ name: fc.constantFrom(...names), role: fc.constantFrom(...roles), deleting: fc.boolean() }),
    { selector: (n) => n.name },
  ),
  selectRoles: fc.subarray(roles, { minLength: 1 }),
  existing: fc.uniqueArray(
    fc.record({
      name: fc.constantFrom(...names),
      owner: fc.constantFrom("self", "other", "none", "elsewhere"),
      drifted: fc.boolean(),
    }),
    { selector: (e) => `${e.name}/${e.owner === "elsewhere" ? "b" : "a"}` },
  ),
});

type World = typeof world extends fc.Arbitrary<infer W> ? W : never;

function build(w: World) {
  const self = set("fast", w.selectRoles);
  const other = set("other", ["storage"]);
  const elsewhere = set("b", ["storage"], "team-b");
  const nodeList = w.nodes.map((n) => node(n.name, n.role, n.deleting));
  const existing = w.existing
    .filter(
      (e, i, all) =>
        e.owner === "elsewhere" || all.findIndex((x) => x.name === e.name && x.owner !== "elsewhere") === i,
    )
    .map((e) =>
      lvmNode(
        e.name,
        e.owner === "self"
          ? self
          : e.owner === "other"
            ? other
            : e.owner === "elsewhere"
              ? elsewhere
              : undefined,
        e.owner === "elsewhere" ? "team-b" : "storage",
        e.drifted ? { ...template, deletionPolicy: "Delete" } : template,
      ),
    );
  return { self, nodeList, existing };
}

/** What the API server would hold after the actions. */
function apply(existing: LVMNodeObject[], actions: readonly Action[]): LVMNodeObject[] {
  let out = [...existing];
  for (const a of actions) {
    if (a.kind === "create")
      out.push({
        ...a.object,
        metadata: { ...a.object.metadata, uid: `new-${a.node}`, resourceVersion: "1" },
      });
    if (a.kind === "delete") out = out.filter((o) => o.metadata.uid !== a.uid);
    if (a.kind === "update")
      out = out.map((o) =>
        o.metadata.name === a.node && o.metadata.namespace === "storage"
          ? (applyMergePatch(o, a.patch) as LVMNodeObject)
          : o,
      );
  }
  return out;
}

describe("planNodeSet properties", () => {
  test("reconciling twice: the second plan has no actions", () => {
    fc.assert(
      fc.property(world, (w) => {
        const { self, nodeList, existing } = build(w);
        const first = planNodeSet(self, nodeList, existing);
        expect(planNodeSet(self, nodeList, apply(existing, first.actions)).actions).toEqual([]);
      }),
    );
  });

  test("the order of nodes and LVMNodes does not change the plan", () => {
    fc.assert(
      fc.property(world, fc.integer(), (w, seed) => {
        const { self, nodeList, existing } = build(w);
        const shuffle = <T>(xs: T[]) =>
          fc.sample(fc.shuffledSubarray(xs, { minLength: xs.length, maxLength: xs.length }), {
            seed,
            numRuns: 1,
          })[0]!;
        expect(planNodeSet(self, shuffle(nodeList), shuffle(existing))).toEqual(
          planNodeSet(self, nodeList, existing),
        );
      }),
    );
  });

  test("never updates or deletes an LVMNode the set does not control; never creates where one exists", () => {
    fc.assert(
      fc.property(world, (w) => {
        const { self, nodeList, existing } = build(w);
        const mine = existing.filter((o) => o.metadata.ownerReferences?.[0]?.uid === self.metadata.uid);
        for (const a of planNodeSet(self, nodeList, existing).actions) {
          if (a.kind === "delete") expect(mine.map((o) => o.metadata.uid)).toContain(a.uid);
          if (a.kind === "update") expect(mine.map((o) => o.metadata.name)).toContain(a.node);
          if (a.kind === "create") expect(existing.filter((o) => o.metadata.name === a.node)).toEqual([]);
        }
      }),
    );
  });
});
