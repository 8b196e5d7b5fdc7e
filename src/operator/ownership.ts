import { GROUP_VERSION } from "../api";
import type { KubeObject, OwnerReference } from "../kube/client";
import type { LVMNodeObject, LVMNodeSetObject } from "./types";

/**
 * The finalizer the operator puts on every LVMNodeSet: the set stays (Terminating) until each of
 * its LVMNodes is gone, so whatever an LVMNode's deletion does on its node finishes first.
 */
export const NODESET_FINALIZER = "lvm.topolvm.io/lvmnodes";

/** The owner reference that makes `set` the controller of an LVMNode (as the proposal shows). */
export function controllerReference(set: LVMNodeSetObject): OwnerReference {
  return {
    apiVersion: GROUP_VERSION,
    kind: "LVMNodeSet",
    name: set.metadata.name,
    uid: set.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The object's controller reference, if it has one. */
export function controllerOf(o: KubeObject): OwnerReference | undefined {
  return o.metadata.ownerReferences?.find((r) => r.controller === true);
}

/** True when `o` is controlled by exactly this set (by uid: a set deleted and re-created is another set). */
export function isControlledBy(o: KubeObject, set: LVMNodeSetObject): boolean {
  const ref = controllerOf(o);
  return ref !== undefined && ref.kind === "LVMNodeSet" && ref.uid === set.metadata.uid;
}

/** "LVMNodeSet storage/fast", or what else controls `o`, for messages. */
export function describeController(o: KubeObject): string {
  const ref = controllerOf(o);
  if (!ref) return "no controller";
  return `${ref.kind} ${ref.kind === "LVMNodeSet" ? `${o.metadata.namespace}/` : ""}${ref.name}`;
}

/**
 * The LVMNodeSet that controls `o`, among `sets` (the operator's cache): same namespace, the
 * controller reference's name and uid. Undefined for a hand-made LVMNode, one controlled by
 * anything else, or one whose set is gone or was re-created (another uid).
 */
export function controllingSet(
  o: KubeObject,
  sets: readonly LVMNodeSetObject[],
): LVMNodeSetObject | undefined {
  const ref = controllerOf(o);
  if (!ref || ref.kind !== "LVMNodeSet" || !ref.uid) return undefined;
  return sets.find(
    (s) =>
      s.metadata.namespace === o.metadata.namespace &&
      s.metadata.name === ref.name &&
      s.metadata.uid === ref.uid,
  );
}

/**
 * The order of two sets (docs/operator.md, Overlap): the older set (creationTimestamp); on the same
 * second, the smaller "namespace/name". Pure and the same on every operator replica. It breaks the
 * tie of two LVMNodes created in the same second (`holdsBefore`).
 */
export function precedes(a: LVMNodeSetObject, b: LVMNodeSetObject): boolean {
  const ta = Date.parse(a.metadata.creationTimestamp ?? "") || Number.MAX_SAFE_INTEGER;
  const tb = Date.parse(b.metadata.creationTimestamp ?? "") || Number.MAX_SAFE_INTEGER;
  if (ta !== tb) return ta < tb;
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb;
}

/**
 * The tie-break between two LVMNodes of one node (overlapping sets in two namespaces): the LVMNode
 * that holds it keeps it — the one created first (`creationTimestamp`, set by the API server); in
 * the same second, the one whose set `precedes`. A set created earlier but widened later does not
 * take a node another set's LVMNode already holds. Pure and the same on every replica.
 */
export function holdsBefore(
  a: LVMNodeObject,
  setA: LVMNodeSetObject,
  b: LVMNodeObject,
  setB: LVMNodeSetObject,
): boolean {
  const ta = Date.parse(a.metadata.creationTimestamp ?? "") || Number.MAX_SAFE_INTEGER;
  const tb = Date.parse(b.metadata.creationTimestamp ?? "") || Number.MAX_SAFE_INTEGER;
  if (ta !== tb) return ta < tb;
  return precedes(setA, setB);
}
