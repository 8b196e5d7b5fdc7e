import {
  isLVMNodeStatusChange,
  keysForLVMNodeChange,
  keysForNodeChange,
  keysForNodeSetChange,
} from "./event-mapping";
import { controllerReference } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";

const set = (name: string, role: string, namespace = "storage"): LVMNodeSetObject => ({
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name, namespace, uid: `uid-${name}`, generation: 1 },
  spec: {
    nodeSelector: {
      nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: [role] }] }],
    },
    template: { volumeGroups: [] },
  },
});
const node = (name: string, role: string, extra: Partial<NodeObject["metadata"]> = {}): NodeObject => ({
  metadata: { name, labels: { role }, ...extra },
});
const sets = [set("fast", "storage"), set("gpu", "gpu", "team-b")];

describe("keysForNodeSetChange", () => {
  test("a new value of the rollout-resume annotation reconciles the set; other annotations do not", () => {
    const s = set("fast", "storage");
    const annotated = (a: Record<string, string>) => ({ ...s, metadata: { ...s.metadata, annotations: a } });
    const resume = (v: string) => annotated({ "lvm.topolvm.io/rollout-resume": v });
    expect(keysForNodeSetChange({ type: "updated", old: s, object: resume("1") })).toEqual(["storage/fast"]);
    expect(keysForNodeSetChange({ type: "updated", old: resume("1"), object: resume("2") })).toEqual([
      "storage/fast",
    ]);
    expect(keysForNodeSetChange({ type: "updated", old: s, object: annotated({ note: "x" }) })).toEqual([]);
  });

  test("a status written by someone else (not what the operator last wrote) reconciles the set", () => {
    const s = {
      metadata: { name: "fast", namespace: "storage", generation: 1 },
      spec: {},
    } as never as LVMNodeSetObject;
    const ours = { state: "Degraded" };
    const forged = { ...s, status: { state: "Ready" as const } };
    const mine = { ...s, status: ours as never };
    expect(keysForNodeSetChange({ type: "updated", old: mine, object: forged }, () => ours)).toEqual([
      "storage/fast",
    ]);
    expect(keysForNodeSetChange({ type: "updated", old: s, object: mine }, () => ours)).toEqual([]);
  });

  test("status-only updates are ignored; spec, deletion and finalizer changes are not", () => {
    const s = set("fast", "storage");
    expect(keysForNodeSetChange({ type: "added", object: s })).toEqual(["storage/fast"]);
    expect(
      keysForNodeSetChange({ type: "updated", old: s, object: { ...s, status: { state: "Ready" } } }),
    ).toEqual([]);
    const bumped = { ...s, metadata: { ...s.metadata, generation: 2 } };
    expect(keysForNodeSetChange({ type: "updated", old: s, object: bumped })).toEqual(["storage/fast"]);
    const deleting = { ...s, metadata: { ...s.metadata, deletionTimestamp: "2044-01-01T00:00:00Z" } };
    expect(keysForNodeSetChange({ type: "updated", old: s, object: deleting })).toEqual(["storage/fast"]);
  });
});

describe("keysForNodeChange", () => {
  test("a relabelled node concerns the sets selecting it before and after", () => {
    expect(
      keysForNodeChange({ type: "updated", old: node("n1", "storage"), object: node("n1", "gpu") }, sets),
    ).toEqual(["storage/fast", "team-b/gpu"]);
  });
  test("a heartbeat (same labels) concerns nobody; a new node its sets", () => {
    expect(
      keysForNodeChange({ type: "updated", old: node("n1", "storage"), object: node("n1", "storage") }, sets),
    ).toEqual([]);
    expect(keysForNodeChange({ type: "added", object: node("n2", "gpu") }, sets)).toEqual(["team-b/gpu"]);
  });
});

describe("keysForLVMNodeChange", () => {
  const lvmNode = (owner: LVMNodeSetObject, name = "n1"): LVMNodeObject => ({
    apiVersion: "lvm.topolvm.io/v2alpha1",
    kind: "LVMNode",
    metadata: {
      name,
      namespace: owner.metadata.namespace ?? "",
      ownerReferences: [controllerReference(owner)],
    },
    spec: { volumeGroups: [] },
  });
  const nodes = (name: string) => (name === "n1" ? node("n1", "gpu") : undefined);

  test("an update concerns its controlling set only", () => {
    const o = lvmNode(sets[0]!);
    expect(keysForLVMNodeChange({ type: "updated", old: o, object: o }, sets, nodes)).toEqual([
      "storage/fast",
    ]);
  });
  test("a status (or label) change is one the set only counts; spec, controller, deletion, finalizers, add and delete are not", () => {
    const o = { ...lvmNode(sets[0]!), metadata: { ...lvmNode(sets[0]!).metadata, uid: "u1", generation: 1 } };
    const changed = (over: Partial<LVMNodeObject>, meta: Partial<LVMNodeObject["metadata"]> = {}) =>
      isLVMNodeStatusChange({
        type: "updated",
        old: o,
        object: { ...o, ...over, metadata: { ...o.metadata, resourceVersion: "2", ...meta } },
      });
    expect(changed({ status: { state: "Ready" } })).toBe(true);
    expect(changed({}, { labels: { a: "b" } })).toBe(true);
    expect(changed({ spec: { volumeGroups: [{ name: "vg1" }] } as never }, { generation: 2 })).toBe(false);
    expect(changed({}, { deletionTimestamp: "2044-01-01T00:00:00Z" })).toBe(false);
    expect(changed({}, { finalizers: ["lvm.topolvm.io/node-agent"] })).toBe(false);
    expect(changed({}, { ownerReferences: [] })).toBe(false);
    expect(isLVMNodeStatusChange({ type: "added", object: o })).toBe(false);
    expect(isLVMNodeStatusChange({ type: "deleted", object: o, old: o })).toBe(false);
  });
  test("a deletion also concerns every set selecting the node (one waiting on an overlap)", () => {
    expect(keysForLVMNodeChange({ type: "deleted", object: lvmNode(sets[0]!) }, sets, nodes)).toEqual([
      "storage/fast",
      "team-b/gpu",
    ]);
  });
});
