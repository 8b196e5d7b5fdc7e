import { ROLLOUT_RESUME_ANNOTATION } from "../../api";
import { jsonEqual } from "../../kube/json-equal";
import { matchesNodeSelector } from "../../planner/node-selector";
import type { Change } from "../../kube/informer";
import { objectKey } from "../../kube/informer";
import { controllerOf } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";

/**
 * Which LVMNodeSets to reconcile for a change. Pure: the controller feeds the informers' changes
 * through these and adds the keys to the work queue.
 */

/**
 * A set's own change: new, deleted, or changed in spec (generation), deletion, finalizers, the
 * rollout-resume annotation; its
 * status only when someone else wrote it (`ours`: the status the operator last wrote for the key),
 * so a forged status is put right at once, not at the next resync.
 */
export function keysForNodeSetChange(
  change: Change<LVMNodeSetObject>,
  ours: (key: string) => unknown = () => undefined,
): string[] {
  const { object: now, old } = change;
  if (change.type !== "updated" || !old) return [objectKey(now)];
  const m = (o: LVMNodeSetObject) => [
    o.metadata.generation,
    o.metadata.deletionTimestamp,
    o.metadata.finalizers,
    o.metadata.uid,
    o.metadata.annotations?.[ROLLOUT_RESUME_ANNOTATION], // a resume is acted on at once
  ];
  if (!jsonEqual(m(old), m(now))) return [objectKey(now)];
  const key = objectKey(now);
  const written = ours(key);
  const forged =
    written !== undefined && !jsonEqual(old.status, now.status) && !jsonEqual(now.status, written);
  return forged ? [key] : [];
}

/**
 * An LVMNode's change: its controlling set (spec drift, state for the set's status). When one is
 * added or deleted, also every set selecting its node: a set that reported a conflict on that node
 * may now proceed.
 */
export function keysForLVMNodeChange(
  change: Change<LVMNodeObject>,
  sets: readonly LVMNodeSetObject[],
  nodes: (name: string) => NodeObject | undefined,
): string[] {
  const keys = new Set<string>();
  const o = change.object;
  const ref = controllerOf(o);
  if (ref?.kind === "LVMNodeSet" && o.metadata.namespace) keys.add(`${o.metadata.namespace}/${ref.name}`);
  if (change.type !== "updated") {
    const node = nodes(o.metadata.name);
    for (const set of sets) if (node && selects(set, node)) keys.add(objectKey(set));
  }
  return [...keys].sort();
}

/**
 * Whether an LVMNode's change is one its set only counts (its status: the agent's report, the
 * LVMNode reconcile's writes; or labels and annotations), not one it acts on (spec, controller,
 * deletion, finalizers). A fleet converging writes thousands of these in a minute: the operator
 * reconciles the set once per burst of them (a short delay), not once per write.
 */
export function isLVMNodeStatusChange(change: Change<LVMNodeObject>): boolean {
  const { object: now, old } = change;
  if (change.type !== "updated" || !old) return false;
  const acted = (o: LVMNodeObject) => [
    o.metadata.uid,
    o.metadata.generation,
    o.metadata.deletionTimestamp,
    o.metadata.finalizers,
    o.metadata.ownerReferences,
    o.spec,
  ];
  return jsonEqual(acted(old), acted(now));
}

/** A Node's change: every set that selects it now or selected it before (labels, deletion). */
export function keysForNodeChange(change: Change<NodeObject>, sets: readonly LVMNodeSetObject[]): string[] {
  const { object: now, old } = change;
  if (
    change.type === "updated" &&
    old &&
    jsonEqual(old.metadata.labels ?? {}, now.metadata.labels ?? {}) &&
    old.metadata.deletionTimestamp === now.metadata.deletionTimestamp
  )
    return []; // status heartbeats: nothing a selector sees
  const keys = new Set<string>();
  for (const set of sets) if (selects(set, now) || (old && selects(set, old))) keys.add(objectKey(set));
  return [...keys].sort();
}

function selects(set: LVMNodeSetObject, node: NodeObject): boolean {
  return matchesNodeSelector(set.spec.nodeSelector, {
    name: node.metadata.name,
    labels: node.metadata.labels ?? {},
  });
}
