import { deletionPolicyOf, type ValidationProblem } from "../../api";
import type { KubeObject } from "../../kube/client";
import { sortNatural } from "../../planner/node-index";
import { isControlledBy } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";

/** A TopoLVM LogicalVolume (topolvm.io/v1, cluster-scoped): what the deletion check reads of it. */
export interface LogicalVolumeObject extends KubeObject {
  readonly spec?: { readonly name?: string; readonly nodeName?: string; readonly deviceClass?: string };
  /** volumeID: the LV's name in the volume group (and the PersistentVolume's CSI volume handle). */
  readonly status?: { readonly volumeID?: string };
}

/** A core/v1 PersistentVolume: its claim and phase. */
export interface PersistentVolumeObject extends KubeObject {
  readonly spec?: {
    readonly claimRef?: { readonly namespace?: string; readonly name?: string };
    readonly persistentVolumeReclaimPolicy?: string;
  };
  readonly status?: { readonly phase?: string };
}

/** A LogicalVolume on one of the set's nodes, in one of its volume groups. */
export interface VolumeOnSet {
  readonly node: string;
  readonly volumeGroup: string;
  readonly volume: LogicalVolumeObject;
}

/** Whether `set` controls one of `lvmNodes` (by uid, in its namespace): whether its deletion tears anything down. */
export function controlsAnyLVMNode(set: LVMNodeSetObject, lvmNodes: readonly LVMNodeObject[]): boolean {
  return lvmNodes.some((n) => isControlledBy(n, set) && n.metadata.namespace === set.metadata.namespace);
}

/**
 * The TopoLVM volumes a deletion of `set` would have to destroy, or wait for forever: with
 * deletionPolicy Delete, every LogicalVolume whose node has an LVMNode of this set (by controller
 * uid: what the deletion tears down) and whose device class is one of that LVMNode's, so it lives in
 * that class's volume group (TopoLVM's device class "" is the node's default class). With Retain:
 * none (nothing is torn down). Sorted by node, volume group, name. Pure.
 */
export function volumesOnSet(
  set: LVMNodeSetObject,
  lvmNodes: readonly LVMNodeObject[],
  volumes: readonly LogicalVolumeObject[],
): VolumeOnSet[] {
  if (deletionPolicyOf(set.spec?.template ?? {}) !== "Delete") return [];
  const groupOf = new Map<string, ReadonlyMap<string, string>>();
  for (const n of lvmNodes) {
    if (!isControlledBy(n, set) || n.metadata.namespace !== set.metadata.namespace) continue;
    const classes = new Map<string, string>();
    for (const dc of n.spec?.deviceClasses ?? []) {
      classes.set(dc.name, dc.volumeGroup);
      if (dc.default) classes.set("", dc.volumeGroup);
    }
    groupOf.set(n.metadata.name, classes);
  }
  const found = volumes.flatMap((volume): VolumeOnSet[] => {
    const node = volume.spec?.nodeName ?? "";
    const volumeGroup = groupOf.get(node)?.get(volume.spec?.deviceClass ?? "");
    return volumeGroup === undefined ? [] : [{ node, volumeGroup, volume }];
  });
  return sortNatural(found, (v) => `${v.node}\u0000${v.volumeGroup}\u0000${v.volume.metadata.name}`);
}

/**
 * One problem per volume a user still depends on (volumesOnSet), naming the node, the volume group,
 * the LV, its PersistentVolume and claim, and what to do first. `pvs`: the PersistentVolumes by name
 * (TopoLVM names a LogicalVolume after its PersistentVolume); a volume without one is a snapshot or
 * a volume being provisioned or released.
 */
export function deletionProblems(
  set: LVMNodeSetObject,
  volumes: readonly VolumeOnSet[],
  pvs: ReadonlyMap<string, PersistentVolumeObject>,
): ValidationProblem[] {
  const again = `then destroy again (pulumi destroy, or delete LVMNodeSet ${set.metadata.namespace}/${set.metadata.name})`;
  return volumes.map(({ node, volumeGroup, volume }) => {
    const name = volume.metadata.name;
    const lv = volume.status?.volumeID ? `logical volume ${volume.status.volumeID}` : "a logical volume";
    const where = `is Delete, but volume group ${volumeGroup} on node ${node} still holds ${lv} (TopoLVM LogicalVolume ${name}${volume.metadata.deletionTimestamp ? ", being deleted" : ""}`;
    const pv = pvs.get(volume.spec?.name ?? name) ?? pvs.get(name);
    const claim = pv?.spec?.claimRef?.name
      ? `${pv.spec.claimRef.namespace ?? ""}/${pv.spec.claimRef.name}`
      : undefined;
    let what: string;
    if (pv && claim && pv.status?.phase === "Bound")
      what = `, PersistentVolume ${pv.metadata.name} of claim ${claim}): delete the PVC ${claim}, ${again}`;
    else if (pv)
      what = `, PersistentVolume ${pv.metadata.name}, ${pv.status?.phase ?? "no phase"}${claim ? `, was claim ${claim}` : ""}): delete the PersistentVolume ${pv.metadata.name}, ${again}`;
    else
      what = `, no PersistentVolume): delete what uses it (a VolumeSnapshot, or the LogicalVolume), ${again}`;
    return { path: "spec.template.deletionPolicy", message: `${where}${what}` };
  });
}
