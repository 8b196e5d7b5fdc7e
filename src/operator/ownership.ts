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
 * The tie-break between two sets that select the same node (docs/operator.md): the older set
 * (creationTimestamp) keeps it; on the same second, the smaller "namespace/name". Pure and the same
 * on every operator replica, so the two sides never both act.
 */
export function precedes(a: LVMNodeSetObject, b: LVMNodeSetObject): boolean {
  const ta = Date.parse(a.metadata.creationTimestamp ?? "") || Number.MAX_SAFE_INTEGER;
  const tb = Date.parse(b.metadata.creationTimestamp ?? "") || Number.MAX_SAFE_INTEGER;
  if (ta !== tb) return ta < tb;
  const ka = `${a.metadata.namespace}/${a.metadata.name}`;
  const kb = `${b.metadata.namespace}/${b.metadata.name}`;
  return ka < kb;
}

/** Whether the operator may drive an LVMNode's node, and why not. */
export type Mandate =
  | { readonly ok: true; readonly set: LVMNodeSetObject }
  | { readonly ok: false; readonly reason: "NotManaged" | "NodeSetOverlap"; readonly message: string };

/**
 * Only an LVMNode controlled (by uid) by an LVMNodeSet the operator reconciles is ever sent to an
 * agent, and of two such LVMNodes for the same node (overlapping sets in two namespaces) only the
 * one of the set that wins the tie-break (`precedes`). Pure, from the caches.
 */
export function mandateOf(
  node: LVMNodeObject,
  sets: readonly LVMNodeSetObject[],
  lvmNodes: readonly LVMNodeObject[],
): Mandate {
  const key = `${node.metadata.namespace}/${node.metadata.name}`;
  const set = controllingSet(node, sets);
  if (!set)
    return {
      ok: false,
      reason: "NotManaged",
      message: `LVMNode ${key} is not controlled by an LVMNodeSet this operator reconciles (${describeController(node)}); nothing is sent to node ${node.metadata.name}'s agent, and deleting it tears nothing down`,
    };
  for (const other of lvmNodes) {
    if (other.metadata.name !== node.metadata.name || other.metadata.namespace === node.metadata.namespace)
      continue;
    const rival = controllingSet(other, sets);
    if (rival && precedes(rival, set))
      return {
        ok: false,
        reason: "NodeSetOverlap",
        message: `node ${node.metadata.name} is also selected by LVMNodeSet ${rival.metadata.namespace}/${rival.metadata.name} (LVMNode ${other.metadata.namespace}/${other.metadata.name}), which keeps it (the older set wins); nothing is sent to the node's agent for ${key} until the sets no longer overlap`,
      };
  }
  return { ok: true, set };
}
