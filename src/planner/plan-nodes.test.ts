import type { LVMNodeSetSpec } from "../api";
import { planNodes } from "./plan-nodes";
import { disk, inventory, knameGroup, nodeSpec } from "../../test/support/planner/testing";

const template = nodeSpec([knameGroup("vg1", ["sdb"])]);
const nodes = [
  inventory([disk("sdb")], { node: "worker-10", labels: { zone: "a" } }),
  inventory([disk("sdb")], { node: "worker-2", labels: { zone: "b" } }),
  inventory([disk("sdb")], { node: "worker-1", labels: { zone: "a" } }),
];

test("selected nodes get a plan; the others appear unselected with nothing; nodes sorted by name", () => {
  const spec: LVMNodeSetSpec = {
    nodeSelector: {
      nodeSelectorTerms: [
        {
          matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }],
          matchFields: [{ key: "metadata.name", operator: "NotIn", values: ["worker-10"] }],
        },
        { matchFields: [{ key: "metadata.name", operator: "In", values: ["worker-2"] }] },
      ],
    },
    template,
  };
  const doc = planNodes(nodes, { metadata: { name: "set-a" }, spec });
  expect(doc.apiVersion).toBe("pulumi-lvm.dev/plan/v1");
  expect(doc.nodeSet).toBe("set-a");
  expect(doc.nodes.map((n) => [n.node, n.selected, n.actions.length > 0])).toEqual([
    ["worker-1", true, true],
    ["worker-2", true, true],
    ["worker-10", false, false],
  ]);
  expect(doc.nodes[2]).toMatchObject({
    volumeGroups: [],
    actions: [],
    blocked: [],
    lvmd: { "device-classes": [] },
  });
  expect(doc.nodes[2]!.hash).toMatch(/^[0-9a-f]{64}$/);
});

test("no nodeSelector selects every node", () => {
  expect(planNodes(nodes, { spec: { template } }).nodes.every((n) => n.selected)).toBe(true);
});

test("two inventories for one node are refused", () => {
  expect(() => planNodes([nodes[0]!, nodes[0]!], { spec: { template } })).toThrow(
    "the inventory has two nodes named worker-10",
  );
});
