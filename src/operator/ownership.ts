import { GROUP_VERSION } from "../api";
import type { KubeObject, OwnerReference } from "./kube/client";
import type { LVMNodeSetObject } from "./types";

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
