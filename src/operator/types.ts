import type { LVMNode, LVMNodeSet } from "../api";
import type { KubeObject, ObjectMeta } from "../kube/client";

/** An LVMNodeSet as the API server returns it (metadata with uid, generation, finalizers, ...). */
export type LVMNodeSetObject = Omit<LVMNodeSet, "metadata"> & { readonly metadata: ObjectMeta };

/** An LVMNode as the API server returns it. */
export type LVMNodeObject = Omit<LVMNode, "metadata"> & { readonly metadata: ObjectMeta };

/** A core/v1 Node: only its name, labels and deletion matter here. */
export type NodeObject = KubeObject;
