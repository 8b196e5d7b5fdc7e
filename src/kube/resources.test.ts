import { describeObject, LVM_NODES, LVM_NODE_SETS, NODES, resourcePath } from "./resources";

test.each([
  [
    LVM_NODES,
    "storage",
    "node-a",
    "status",
    "/apis/lvm.topolvm.io/v2alpha1/namespaces/storage/lvmnodes/node-a/status",
  ],
  [
    LVM_NODE_SETS,
    "storage",
    undefined,
    undefined,
    "/apis/lvm.topolvm.io/v2alpha1/namespaces/storage/lvmnodesets",
  ],
  [LVM_NODE_SETS, undefined, undefined, undefined, "/apis/lvm.topolvm.io/v2alpha1/lvmnodesets"],
  [NODES, "ignored", "worker-1", undefined, "/api/v1/nodes/worker-1"],
] as const)("resourcePath(%o, %s, %s, %s) is %s", (r, ns, name, sub, want) => {
  expect(resourcePath(r, ns, name, sub)).toBe(want);
});

test("describeObject names kind, namespace and name", () => {
  expect(describeObject(LVM_NODES, "storage", "node-a")).toBe("LVMNode storage/node-a");
  expect(describeObject(NODES, undefined, "worker-1")).toBe("Node worker-1");
  expect(describeObject(LVM_NODE_SETS, undefined)).toBe("LVMNodeSets in all namespaces");
  expect(describeObject(LVM_NODE_SETS, "storage")).toBe("LVMNodeSets in namespace storage");
  expect(describeObject(NODES, undefined)).toBe("Nodes");
});
