/**
 * The LVMNodeSet spec as Pulumi component args: the same fields as the API (src/api), written as
 * explicit interfaces so Pulumi's schema inference can read them (it rejects the anonymous object
 * types zod infers, union types, and `readonly T[]`). Enumerations are plain `string`s here; the API
 * schemas check them, with the field path, when a component is constructed.
 *
 * Plain values, not Outputs: a component validates its spec and derives child names from it before
 * it registers anything, which needs the values at construction.
 */

/** core/v1 NodeSelector: which nodes a node set applies to. */
export interface NodeSelectorSpec {
  /**
   * Terms ORed: a node is selected when any term matches.
   * @example [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["edge-1"] }] }]
   */
  readonly nodeSelectorTerms: NodeSelectorTerm[];
}

/** Requirements ANDed; a node matches the term when all of them hold. */
export interface NodeSelectorTerm {
  /** Node label requirements. @default [] */
  readonly matchExpressions?: NodeSelectorRequirement[];
  /** Node field requirements; only `metadata.name` is supported. @default [] */
  readonly matchFields?: NodeSelectorRequirement[];
}

/** One requirement on a node label or field, as core/v1 NodeSelectorRequirement. */
export interface NodeSelectorRequirement {
  /** The label key (or `metadata.name` in matchFields). @example "topology.kubernetes.io/zone" */
  readonly key: string;
  /** One of In, NotIn, Exists, DoesNotExist, Gt, Lt. @example "In" */
  readonly operator: string;
  /** In/NotIn: one or more; Exists/DoesNotExist: none; Gt/Lt: exactly one integer. @example ["edge-1"] */
  readonly values?: string[];
}

/** Which block devices of a node belong to a volume group. */
export interface DeviceSelector {
  /**
   * Terms ORed: a device is selected when any term matches.
   * @example [{ matchExpressions: [{ key: "path", operator: "In", values: ["/dev/disk/by-id/nvme-eui.0025388b91b2c3d4"] }] }]
   */
  readonly deviceSelectorTerms: DeviceSelectorTerm[];
}

/** Requirements ANDed: a device matches the term when all hold. */
export interface DeviceSelectorTerm {
  /** At least one requirement (an empty term would match every disk). */
  readonly matchExpressions: DeviceSelectorRequirement[];
}

/** One requirement on a device attribute. */
export interface DeviceSelectorRequirement {
  /**
   * One of kname, path, symlink, serial, wwn, model, vendor, size, rotational, type, partlabel.
   * @example "serial"
   */
  readonly key: string;
  /** One of In, NotIn, Any, Exists, DoesNotExist, GreaterThan, LessThan. @example "In" */
  readonly operator: string;
  /** In/NotIn: one or more; Any/Exists/DoesNotExist: none; GreaterThan/LessThan: one number (a quantity for size). @example ["S4EWNX0R123456"] */
  readonly values?: string[];
}

/** A volume group built on every selected node from the devices its selector picks. */
export interface VolumeGroupSpec {
  /** The LVM volume group name on every node (a DNS-1123 label). @example "vg-data" */
  readonly name: string;
  /** Which devices of each node join the group. */
  readonly deviceSelector: DeviceSelector;
  /** Devices smaller than this are excluded. @default "1Gi" @example "100Gi" */
  readonly minDeviceSize?: string;
  /**
   * Static: after the group's first apply, devices that appear later are excluded ("appeared after
   * the group was built; discovery is Static"). Dynamic: a device the selector picks joins whenever it
   * appears (under the approvalPolicy, a device joining a group that exists waits for an approval).
   * @default "Dynamic"
   */
  readonly deviceDiscoveryPolicy?: string;
  /**
   * Erase existing signatures (filesystems, partition tables, foreign LVM metadata) on the selected
   * devices before pvcreate. Without it such devices are excluded and reported, never touched.
   * @default false
   */
  readonly forceWipeDevicesAndDestroyAllData?: boolean;
  /**
   * What a plan does when a physical volume of the group is missing (its disk died or was pulled).
   * Wait: nothing changes until the disk is back. RemoveFromGroup: the missing physical volumes leave
   * the group, only when no logical volume has data on them. RemoveWithLostVolumes: the logical
   * volumes that had data on them are removed too, each named in the plan, which always waits for an
   * approval of its hash.
   * @default "Wait"
   */
  readonly missingDevicePolicy?: string;
}

/** Thin pool settings of a device class with strategy Thin. */
export interface ThinPoolSpec {
  /** The thin pool logical volume's name (must not start with "snapshot" or "pvmove"). @example "pool0" */
  readonly poolName: string;
  /** Percent of the volume group the pool's data takes, 1 to 100. @example 90 */
  readonly sizePercent: number;
  /** How far thin volumes may overcommit the pool (TopoLVM overprovision-ratio), at least 1. @example 10 */
  readonly overprovisionRatio: number;
  /** A multiple of 64Ki between 64Ki and 1Gi. @default chosen by lvm2 @example "256Ki" */
  readonly chunkSize?: string;
  /** Between 2Mi and 16Gi. @default chosen by lvm2 @example "1Gi" */
  readonly metadataSize?: string;
}

/** The StorageClass of a device class. */
export interface StorageClassOptions {
  /** CreateIfNotExists (the component creates and owns it) or Never (no StorageClass). @default "CreateIfNotExists" */
  readonly creationPolicy?: string;
  /** Prefixed: "<prefix>-<deviceClass>"; Explicit: `name`. @default "Prefixed" */
  readonly namingPolicy?: string;
  /** Prefix for namingPolicy Prefixed. @default "lvms" */
  readonly prefix?: string;
  /** The name for namingPolicy Explicit. @example "fast-local" */
  readonly name?: string;
  /** Extra `parameters`; ours (device class, fstype) win on conflicts. @example { "topolvm.io/lvcreate-option-class": "raid1" } */
  readonly additionalParameters?: Record<string, string>;
  /** Delete or Retain. @default "Delete" */
  readonly reclaimPolicy?: string;
  /** WaitForFirstConsumer or Immediate; TopoLVM needs WaitForFirstConsumer to pick the node. @default "WaitForFirstConsumer" */
  readonly volumeBindingMode?: string;
  /** @default true */
  readonly allowVolumeExpansion?: boolean;
}

/** The VolumeSnapshotClass of a Thin device class. */
export interface SnapshotClassOptions {
  /** CreateIfNotExists (the component creates and owns it) or Never (no VolumeSnapshotClass). @default "CreateIfNotExists" */
  readonly creationPolicy?: string;
  /** Prefixed: "<prefix>-<deviceClass>"; Explicit: `name`. @default "Prefixed" */
  readonly namingPolicy?: string;
  /** Prefix for namingPolicy Prefixed. @default "lvms" */
  readonly prefix?: string;
  /** The name for namingPolicy Explicit. @example "fast-local-snapshots" */
  readonly name?: string;
  /** Extra `parameters` of the VolumeSnapshotClass. @default {} */
  readonly additionalParameters?: Record<string, string>;
  /** Delete or Retain. @default "Delete" */
  readonly deletionPolicy?: string;
}

/** A TopoLVM device class on one volume group, with its StorageClass and VolumeSnapshotClass. */
export interface DeviceClassSpec {
  /** The TopoLVM device class name (a DNS-1123 label). @example "fast" */
  readonly name: string;
  /** Thin (volumes in a thin pool, snapshots possible) or Thick (linear volumes). @example "Thin" */
  readonly strategy: string;
  /** Name of a volume group of the same template. @example "vg-data" */
  readonly volumeGroup: string;
  /** lvmd's default device class; at most one per template. @default false */
  readonly default?: boolean;
  /** xfs, ext4 or btrfs. @default "xfs" */
  readonly fsType?: string;
  /** Required for strategy Thin, forbidden for Thick. */
  readonly thin?: ThinPoolSpec;
  /** @default a StorageClass named "lvms-<name>" */
  readonly storageClass?: StorageClassOptions;
  /** Thin only. @default for Thin, a VolumeSnapshotClass named "lvms-<name>" */
  readonly snapshotClass?: SnapshotClassOptions;
}

/** Thin pool usage thresholds (the LVMNode's ThinPoolNearlyFull condition and its Events). */
export interface CapacitySpec {
  /** Data or metadata use, in percent, from which a thin pool is nearly full. @default 75 */
  readonly warningPercent?: number;
  /** ... and critically full; above warningPercent. @default 85 */
  readonly criticalPercent?: number;
}

/** What every selected node gets. */
export interface NodeSetTemplate {
  /** 1 to 32 volume groups. */
  readonly volumeGroups: VolumeGroupSpec[];
  /** Up to 32 device classes over those volume groups. @default [] */
  readonly deviceClasses?: DeviceClassSpec[];
  /**
   * What happens on the nodes when the node set is deleted: Retain (volume groups and pools stay)
   * or Delete (pools and volume groups that hold no other volumes are removed).
   * @default "Retain"
   */
  readonly deletionPolicy?: string;
  /** When a thin pool counts as nearly full. @default { warningPercent: 75, criticalPercent: 85 } */
  readonly capacity?: CapacitySpec;
  /**
   * Which plans the operator applies without a person's approval: Automatic, Destructive (a wipe,
   * a device joining an existing group, a removal, moving or reducing data waits) or Always.
   * @default "Destructive"
   */
  readonly approvalPolicy?: string;
}
