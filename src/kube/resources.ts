import { API_GROUP, API_VERSION } from "../api";

/** A REST resource the operator reads or writes. */
export interface Resource {
  /** "" for the core group. */
  readonly group: string;
  readonly version: string;
  /** The URL segment, e.g. "lvmnodes". */
  readonly plural: string;
  /** The kind, for error messages. */
  readonly kind: string;
  readonly namespaced: boolean;
}

export const LVM_NODE_SETS: Resource = {
  group: API_GROUP,
  version: API_VERSION,
  plural: "lvmnodesets",
  kind: "LVMNodeSet",
  namespaced: true,
};
export const LVM_NODES: Resource = {
  group: API_GROUP,
  version: API_VERSION,
  plural: "lvmnodes",
  kind: "LVMNode",
  namespaced: true,
};
export const PODS: Resource = { group: "", version: "v1", plural: "pods", kind: "Pod", namespaced: true };
export const SERVICE_ACCOUNTS: Resource = {
  group: "",
  version: "v1",
  plural: "serviceaccounts",
  kind: "ServiceAccount",
  namespaced: true,
};
export const NODES: Resource = { group: "", version: "v1", plural: "nodes", kind: "Node", namespaced: false };
export const PERSISTENT_VOLUMES: Resource = {
  group: "",
  version: "v1",
  plural: "persistentvolumes",
  kind: "PersistentVolume",
  namespaced: false,
};
/** TopoLVM's record of each volume it made (cluster-scoped; its CRD may be absent). */
export const TOPOLVM_LOGICAL_VOLUMES: Resource = {
  group: "topolvm.io",
  version: "v1",
  plural: "logicalvolumes",
  kind: "LogicalVolume",
  namespaced: false,
};

/**
 * The API path of a collection (no name) or an object, in one namespace or (namespace undefined)
 * across all of them.
 *
 * @example resourcePath(LVM_NODES, "storage", "node-a", "status")
 *   // "/apis/lvm.topolvm.io/v2alpha1/namespaces/storage/lvmnodes/node-a/status"
 */
export function resourcePath(r: Resource, namespace?: string, name?: string, subresource?: string): string {
  const base = r.group ? `/apis/${r.group}/${r.version}` : `/api/${r.version}`;
  const ns = r.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const obj = name === undefined ? "" : `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ""}`;
  return `${base}${ns}/${r.plural}${obj}`;
}

/** "LVMNode storage/node-a", "Node worker-1", "LVMNodes in all namespaces": how errors and logs name objects. */
export function describeObject(r: Resource, namespace: string | undefined, name?: string): string {
  if (name !== undefined) return `${r.kind} ${r.namespaced && namespace ? `${namespace}/` : ""}${name}`;
  if (!r.namespaced) return `${r.kind}s`;
  return namespace ? `${r.kind}s in namespace ${namespace}` : `${r.kind}s in all namespaces`;
}
