import type { LVMNodeSetObject, NodeObject } from "../types";
import { overlapProblems } from "./overlap";

const node = (name: string, role: string, deleting = false): NodeObject => ({
  metadata: { name, labels: { role }, ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
});

function set(
  namespace: string,
  name: string,
  roles: string[],
  created?: string,
  deleting = false,
): LVMNodeSetObject {
  return {
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNodeSet",
    metadata: {
      name,
      namespace,
      ...(created ? { creationTimestamp: created } : {}),
      ...(deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}),
    },
    spec: {
      nodeSelector: {
        nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: roles }] }],
      },
      template: { volumeGroups: [], deviceClasses: [] },
    },
  } as unknown as LVMNodeSetObject;
}

const nodes = [node("n1", "a"), node("n2", "a"), node("n10", "a"), node("n3", "b"), node("n4", "c", true)];
const fast = set("storage", "fast", ["a"], "2026-01-01T00:00:00Z");

describe("overlapProblems", () => {
  test("a new set selecting another set's nodes: one problem per set, the nodes in natural order", () => {
    const other = set("team-b", "bulk", ["b"], "2026-01-02T00:00:00Z");
    expect(overlapProblems(set("x", "new", ["a", "b"]), [other, fast], nodes)).toEqual([
      {
        path: "spec.nodeSelector",
        message:
          "selects nodes n1, n2 and n10, which LVMNodeSet storage/fast already selects; a node belongs to at most one node set",
      },
      {
        path: "spec.nodeSelector",
        message:
          "selects node n3, which LVMNodeSet team-b/bulk already selects; a node belongs to at most one node set",
      },
    ]);
  });

  test("nothing shared, the set itself, sets and nodes being deleted: no problem", () => {
    expect(overlapProblems(set("x", "new", ["b"]), [fast], nodes)).toEqual([]);
    expect(overlapProblems(fast, [fast], nodes)).toEqual([]);
    expect(overlapProblems(set("x", "new", ["a"]), [set("s", "old", ["a"], undefined, true)], nodes)).toEqual(
      [],
    );
    expect(
      overlapProblems(set("x", "new", ["c"]), [set("s", "c", ["c"], "2026-01-01T00:00:00Z")], nodes),
    ).toEqual([]);
  });

  test("whatever the ages: an older set newly selecting a younger set's nodes is refused", () => {
    const older = set("team-b", "old", ["a"], "2025-01-01T00:00:00Z");
    const before = set("team-b", "old", ["nobody"], "2025-01-01T00:00:00Z");
    expect(overlapProblems(older, [fast], nodes, before)).toEqual([
      {
        path: "spec.nodeSelector",
        message:
          "selects nodes n1, n2 and n10, which LVMNodeSet storage/fast already selects; a node belongs to at most one node set",
      },
    ]);
    expect(overlapProblems(older, [fast], nodes)).toHaveLength(1);
  });

  test("an update: only nodes newly selected count; those selected before (a Node relabelled into both) do not", () => {
    const late = set("team-b", "late", ["a"], "2026-02-01T00:00:00Z");
    expect(overlapProblems(late, [fast], nodes, late)).toEqual([]);
    const wider = set("team-b", "late", ["a", "b"], "2026-02-01T00:00:00Z");
    const bulk = set("team-c", "bulk", ["b"], "2026-03-01T00:00:00Z");
    expect(overlapProblems(wider, [fast, bulk], nodes, late)).toEqual([
      {
        path: "spec.nodeSelector",
        message:
          "selects node n3, which LVMNodeSet team-c/bulk already selects; a node belongs to at most one node set",
      },
    ]);
  });

  test("more than five nodes: the first five and a count", () => {
    const many = Array.from({ length: 8 }, (_, i) => node(`m${i + 1}`, "a"));
    expect(overlapProblems(set("x", "new", ["a"]), [fast], many)[0]!.message).toBe(
      "selects nodes m1, m2, m3, m4, m5 and 3 more, which LVMNodeSet storage/fast already selects; a node belongs to at most one node set",
    );
  });
});
