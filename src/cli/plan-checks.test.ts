import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseLVMNodeSet } from "../api";
import { parseNodeInventory } from "../inventory/parse";
import type { RawNodeInventory } from "../inventory/types";
import { planNodes, type PlanDocument } from "../planner";
import { missLine, overlapLines, planExitCode, selectorMisses, setsSelectingNoNode } from "./plan-checks";
import type { FileNodeSet } from "./plan-input";

const nodes = (
  JSON.parse(readFileSync(join(__dirname, "../../examples/sample-inventory.json"), "utf8")) as {
    nodes: RawNodeInventory[];
  }
).nodes.map((n) => parseNodeInventory(n));

/** A set in `file` selecting the nodes of `zones`, one volume group taking what `devices` selects. */
function set(
  file: string,
  name: string,
  zones: string[],
  devices: object[] = [{ key: "kname", operator: "Any" }],
  metadata: object = {},
): FileNodeSet {
  return {
    file,
    set: parseLVMNodeSet({
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: { name, ...metadata },
      spec: {
        nodeSelector: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: zones }] },
          ],
        },
        template: {
          volumeGroups: [
            { name: "vg-x", deviceSelector: { deviceSelectorTerms: [{ matchExpressions: devices }] } },
          ],
        },
      },
    }),
  };
}

const refusal = (file: string, name: string, nodes: string, other: string) =>
  `${file}: LVMNodeSet/${name}: spec.nodeSelector: selects ${nodes}, which LVMNodeSet ${other} already selects; a node belongs to at most one node set`;

describe("overlapLines: the webhook's refusals, the sets applied in the order given", () => {
  const a = set("a.yaml", "a", ["zone-a"]);
  const b = set("b.yaml", "b", ["zone-a", "zone-b"]);
  const c = set("c.yaml", "c", ["zone-b"]);

  test("sets that select different nodes: none", () => {
    expect(overlapLines([a, c], nodes)).toEqual([]);
  });

  test("the later of two new sets is the one refused, whatever their names", () => {
    expect(overlapLines([a, b], nodes)).toEqual([
      refusal("b.yaml", "b", "nodes edge-1 and edge-2", "default/a"),
    ]);
    expect(overlapLines([b, a], nodes)).toEqual([
      refusal("a.yaml", "a", "nodes edge-1 and edge-2", "default/b"),
    ]);
  });

  test("one line for each earlier set a set overlaps", () => {
    expect(overlapLines([a, c, b], nodes)).toEqual([
      refusal("b.yaml", "b", "nodes edge-1 and edge-2", "default/a"),
      refusal("b.yaml", "b", "node edge-3", "default/c"),
    ]);
  });

  test("a set that exists (creationTimestamp, as kubectl get prints it) keeps its nodes, listed first or last", () => {
    const old = set("old.yaml", "old", ["zone-b"], undefined, {
      namespace: "storage",
      creationTimestamp: "2026-01-01T00:00:00Z",
    });
    const younger = set("young.yaml", "young", ["zone-b"], undefined, {
      namespace: "storage",
      creationTimestamp: "2026-06-01T00:00:00Z",
    });
    expect(overlapLines([c, old], nodes)).toEqual([refusal("c.yaml", "c", "node edge-3", "storage/old")]);
    expect(overlapLines([old, c], nodes)).toEqual([refusal("c.yaml", "c", "node edge-3", "storage/old")]);
    expect(overlapLines([younger, old], nodes)).toEqual([
      refusal("young.yaml", "young", "node edge-3", "storage/old"),
    ]);
  });
});

test("setsSelectingNoNode: a set whose nodeSelector picks none of the nodes", () => {
  const typo = set("t.yaml", "typo", ["zone-c"]);
  expect(setsSelectingNoNode([set("a.yaml", "a", ["zone-a"]), typo], nodes)).toEqual([typo]);
});

describe("selectorMisses", () => {
  const plan = (s: FileNodeSet) => planNodes(nodes, s.set);

  test("each In value that names nothing on a node, and each other expression that selects nothing", () => {
    const s = set(
      "s.yaml",
      "s",
      ["zone-a"],
      [
        { key: "type", operator: "In", values: ["loop", "disk"] },
        { key: "size", operator: "GreaterThan", values: ["5Gi"] },
      ],
    );
    const misses = selectorMisses(plan(s), [s], nodes);
    const at = "spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions";
    expect(misses).toEqual([
      { node: "edge-1", nodeSet: "s", volumeGroup: "vg-x", path: `${at}[0]`, expression: "type In disk" },
      {
        node: "edge-1",
        nodeSet: "s",
        volumeGroup: "vg-x",
        path: `${at}[1]`,
        expression: "size GreaterThan 5Gi",
      },
      { node: "edge-2", nodeSet: "s", volumeGroup: "vg-x", path: `${at}[0]`, expression: "type In disk" },
    ]);
    expect(missLine(misses[0]!)).toBe(
      `node edge-1: volume group vg-x: type In disk matches no device on this node (LVMNodeSet/s: ${at}[0])`,
    );
  });

  test("device names (kname, path, symlink) are left to the planner, which reports them as not found", () => {
    const s = set("s.yaml", "s", ["zone-a"], [{ key: "kname", operator: "In", values: ["/dev/sdz"] }]);
    const doc = plan(s);
    expect(selectorMisses(doc, [s], nodes)).toEqual([]);
    expect(doc.nodes[0]!.volumeGroups[0]!.excluded).toEqual([
      { kname: "/dev/sdz", reasons: ["/dev/sdz was not found"] },
    ]);
  });
});

describe("planExitCode", () => {
  const node = (extra: object) => ({
    node: "n",
    selected: true,
    volumeGroups: [],
    actions: [],
    blocked: [],
    lvmd: { "device-classes": [] },
    hash: "",
    ...extra,
  });
  const doc = (...n: object[]) => ({ apiVersion: "pulumi-lvm.dev/plan/v1", nodes: n }) as PlanDocument;
  const step = { op: "pvcreate", argv: ["pvcreate", "/dev/sdb"], reason: "r" };

  test.each([
    ["converged", doc(node({})), 0, false, 0],
    ["converged, detailed", doc(node({})), 0, true, 0],
    ["changes", doc(node({ actions: [step] })), 0, false, 0],
    ["changes, detailed", doc(node({ actions: [step] })), 0, true, 4],
    [
      "blocked beside changes, detailed",
      doc(node({ actions: [step] }), node({ blocked: [{ reason: "x" }] })),
      0,
      true,
      3,
    ],
    ["a set selecting no node", doc(node({})), 1, false, 3],
    [
      "blocked on a node no set selects does not count",
      doc(node({ selected: false, blocked: [{ reason: "x" }] })),
      0,
      true,
      0,
    ],
  ])("%s", (_name, d, idle, detailed, code) => {
    expect(planExitCode(d, idle, detailed)).toBe(code);
  });
});
