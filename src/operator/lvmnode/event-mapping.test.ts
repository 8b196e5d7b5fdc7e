import {
  keysForAgentPodChange,
  keysForControllingSetChange,
  keysForNodeDeleted,
  keysForNodeSelectionChange,
  keysForOwnLVMNodeChange,
} from "./event-mapping";
import { controllerReference } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";
import type { KubeObject } from "../../kube/client";

const lvmNode = (ns: string, name: string, meta: Record<string, unknown> = {}) =>
  ({ metadata: { name, namespace: ns, generation: 1, ...meta }, spec: {} }) as unknown as LVMNodeObject;
const LVMNODES = [lvmNode("storage", "n1"), lvmNode("team-b", "n1"), lvmNode("storage", "n2")];

function pod(
  node: string,
  ready: string,
  labels: Record<string, string> = { "app.kubernetes.io/name": "pulumi-lvm-agent" },
) {
  return {
    metadata: {
      name: `agent-${node}`,
      namespace: "lvm-system",
      labels,
      resourceVersion: String(Math.random()),
    },
    spec: { nodeName: node, containers: [{ name: "agent" }] },
    status: { phase: "Running", podIP: "10.0.0.1", conditions: [{ type: "Ready", status: ready }] },
  } as KubeObject;
}

test("own changes: added, spec, deletion, finalizers; not status, not deleted", () => {
  const a = lvmNode("storage", "n1");
  expect(keysForOwnLVMNodeChange({ type: "added", object: a })).toEqual(["storage/n1"]);
  expect(
    keysForOwnLVMNodeChange({
      type: "updated",
      object: { ...a, status: { state: "Ready" } } as LVMNodeObject,
      old: a,
    }),
  ).toEqual([]);
  expect(
    keysForOwnLVMNodeChange({ type: "updated", object: lvmNode("storage", "n1", { generation: 2 }), old: a }),
  ).toEqual(["storage/n1"]);
  expect(
    keysForOwnLVMNodeChange({
      type: "updated",
      object: lvmNode("storage", "n1", { deletionTimestamp: "x" }),
      old: a,
    }),
  ).toEqual(["storage/n1"]);
  expect(keysForOwnLVMNodeChange({ type: "deleted", object: a })).toEqual([]);
});

test("a new value of the reconcile-request annotation: that LVMNode; the same value again, or another annotation: nothing", () => {
  const annotated = (annotations: Record<string, string>) => lvmNode("storage", "n1", { annotations });
  const asked = annotated({ "lvm.topolvm.io/reconcile-requested-at": "1" });
  const change = (old: LVMNodeObject, object: LVMNodeObject) =>
    keysForOwnLVMNodeChange({ type: "updated", object, old });
  expect(change(lvmNode("storage", "n1"), asked)).toEqual(["storage/n1"]);
  expect(change(asked, annotated({ "lvm.topolvm.io/reconcile-requested-at": "2" }))).toEqual(["storage/n1"]);
  expect(change(asked, annotated({ "lvm.topolvm.io/reconcile-requested-at": "1", team: "a" }))).toEqual([]);
});

test("an agent pod turning Ready or not: the LVMNodes of its node in every namespace", () => {
  const change = { type: "updated" as const, object: pod("n1", "True"), old: pod("n1", "False") };
  expect(keysForAgentPodChange(change, LVMNODES)).toEqual(["storage/n1", "team-b/n1"]);
  expect(keysForAgentPodChange({ type: "added", object: pod("n2", "False") }, LVMNODES)).toEqual([
    "storage/n2",
  ]);
});

test("a pod update that changes nothing callable, or a pod that is not an agent: nothing", () => {
  expect(
    keysForAgentPodChange({ type: "updated", object: pod("n1", "True"), old: pod("n1", "True") }, LVMNODES),
  ).toEqual([]);
  expect(
    keysForAgentPodChange({ type: "added", object: pod("n1", "True", { app: "web" }) }, LVMNODES),
  ).toEqual([]);
});

test("a Node deleted: its LVMNodes", () => {
  const node = { metadata: { name: "n2" } };
  expect(keysForNodeDeleted({ type: "deleted", object: node }, LVMNODES)).toEqual(["storage/n2"]);
  expect(keysForNodeDeleted({ type: "updated", object: node, old: node }, LVMNODES)).toEqual([]);
});

test("a set's change: added or gone, its namespace's LVMNodes; its spec, the LVMNodes it controls; its status, none", () => {
  const set = (generation: number) =>
    ({
      metadata: { name: "fast", namespace: "storage", uid: "u-fast", generation },
    }) as unknown as LVMNodeSetObject;
  const own = lvmNode("storage", "n1", { ownerReferences: [controllerReference(set(1))] });
  const all = [own, lvmNode("storage", "n2"), lvmNode("team-b", "n1")];
  expect(keysForControllingSetChange({ type: "added", object: set(1) }, all)).toEqual([
    "storage/n1",
    "storage/n2",
  ]);
  expect(keysForControllingSetChange({ type: "deleted", object: set(1) }, all)).toEqual([
    "storage/n1",
    "storage/n2",
  ]);
  expect(keysForControllingSetChange({ type: "updated", object: set(2), old: set(1) }, all)).toEqual([
    "storage/n1",
  ]);
  expect(keysForControllingSetChange({ type: "updated", object: set(1), old: set(1) }, all)).toEqual([]);
});

test("a Node's labels or deletion changed, or the Node added: the LVMNodes named after it; a heartbeat: none", () => {
  const node = (labels: Record<string, string>, meta: Record<string, unknown> = {}) =>
    ({ metadata: { name: "n1", labels, resourceVersion: String(Math.random()), ...meta } }) as KubeObject;
  const a = node({ role: "storage" });
  expect(keysForNodeSelectionChange({ type: "added", object: a }, LVMNODES)).toEqual([
    "storage/n1",
    "team-b/n1",
  ]);
  expect(
    keysForNodeSelectionChange({ type: "updated", object: node({ role: "x" }), old: a }, LVMNODES),
  ).toEqual(["storage/n1", "team-b/n1"]);
  expect(
    keysForNodeSelectionChange(
      {
        type: "updated",
        object: node({ role: "storage" }, { deletionTimestamp: "2044-01-01T00:00:00Z" }),
        old: a,
      },
      LVMNODES,
    ),
  ).toEqual(["storage/n1", "team-b/n1"]);
  expect(
    keysForNodeSelectionChange({ type: "updated", object: node({ role: "storage" }), old: a }, LVMNODES),
  ).toEqual([]);
  expect(keysForNodeSelectionChange({ type: "deleted", object: a }, LVMNODES)).toEqual([]);
});
