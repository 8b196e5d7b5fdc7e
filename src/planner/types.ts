/**
 * The plan: what the planner decided for each node, and the exact lvm commands to get there.
 * JSON form documented in docs/plan-format.md, apiVersion "pulumi-lvm.dev/plan/v1".
 * The agent executes `actions` in order and nothing else; a device not in a plan is never written.
 */

export const PLAN_API_VERSION = "pulumi-lvm.dev/plan/v1";

/**
 * The kinds of step a plan can hold, in the order they appear in a node plan (planNode). A teardown
 * plan (planTeardown) has its own order: write-lvmd-config, lvchange-deactivate, lvremove-thinpool,
 * vgremove, lvmdevices-deldev, pvremove.
 */
export type ActionOp =
  | "vgreduce-removemissing" // take missing PVs out of a group (only with its missingDevicePolicy)
  | "wipefs" // erase signatures (only with forceWipeDevicesAndDestroyAllData)
  | "pvcreate"
  | "lvmdevices-adddev" // list a PV of ours in lvm's devices file (only when the host uses one)
  | "vgcreate"
  | "vgextend"
  | "pvchange" // tag a new physical volume with the kernel name it was selected by
  | "pvmove" // move extents off a PV leaving the selector
  | "vgreduce"
  | "lvmdevices-deldev" // remove a device from lvm's devices file before its pvremove
  | "pvremove"
  | "lvcreate-thinpool"
  | "lvextend-thinpool"
  | "lvextend-thinpool-metadata" // grow a pool's metadata LV to what lvm gives its data size
  | "lvchange-deactivate" // only on teardown: deactivate a thin pool so lvremove needs no confirmation
  | "lvremove-thinpool" // only on teardown / deletionPolicy Delete
  | "vgremove" // only on teardown / deletionPolicy Delete
  | "write-lvmd-config";

export interface PlanAction {
  readonly op: ActionOp;
  /** The exact command, argv[0] is the lvm tool ("pvcreate", "vgextend", ...) or "wipefs"; empty for write-lvmd-config. */
  readonly argv: readonly string[];
  /** Volume group the action concerns. */
  readonly volumeGroup?: string;
  /** Device path the action writes to, if any. */
  readonly device?: string;
  /** Stable id of that device (see DeviceClaim.id): the agent re-checks it before writing. */
  readonly deviceId?: string;
  /** For an action on several devices (vgcreate; pvmove's destinations): their paths, in argv order. */
  readonly devices?: readonly string[];
  /** Stable ids of `devices`, in the same order. */
  readonly deviceIds?: readonly string[];
  /** One sentence for people: why this step. */
  readonly reason: string;
  /** True when the step destroys data that exists now (wipefs, vgremove --force). */
  readonly destructive?: boolean;
  /** For wipefs: the signatures it erases (type, UUID, label, offset), as the plan's reviewer saw them. */
  readonly signatures?: readonly WipeSignature[];
  /** For vgreduce-removemissing: the missing physical volumes it removes, as "pv:<uuid>". */
  readonly missingPvs?: readonly string[];
  /** For vgreduce-removemissing --force: the logical volumes it removes with them ("vg/lv"): their data is lost. */
  readonly lostVolumes?: readonly string[];
  /** For write-lvmd-config: the file to write, byte for byte. */
  readonly file?: { readonly path: string; readonly content: string };
}

/** One signature a wipe erases, as probed on the device when the plan was made. */
export interface WipeSignature {
  readonly type: string;
  readonly uuid?: string;
  readonly label?: string;
  /** Byte offset as wipefs prints it, e.g. "0x438". */
  readonly offset?: string;
}

export interface DeviceClaim {
  /** Kernel name path now, e.g. "/dev/sdb", "/dev/dm-3". */
  readonly kname: string;
  /** The path lvm commands use for it (lsblk NAME as a path: "/dev/sdb", "/dev/mapper/crypt-a"). */
  readonly path?: string;
  /** Stable identity: "wwn:<wwn>+serial:<serial>", else "by-id:<link>", else "pv:<uuid>", else "kname:<path>". */
  readonly id: string;
  readonly size: number;
  /** Already a PV of this volume group. */
  readonly member: boolean;
  /** Signature types that will be wiped first (only with the opt-in). */
  readonly wipe?: readonly string[];
  /**
   * The identity of every signature that will be wiped (type, UUID, label, offset), in the plan and
   * its hash: a filesystem re-made after planning (new UUID, another label) changes the hash, so an
   * apply of the old plan is refused with 409 instead of wiping a filesystem nobody reviewed.
   */
  readonly wipeSignatures?: readonly WipeSignature[];
  /** For a member whose kernel name changed since it joined: the kernel name path it had then. */
  readonly renamedFrom?: string;
  /** An orphan PV this agent created itself (PlanOptions.adoptOrphanPvs): joins without pvcreate. */
  readonly adopted?: boolean;
}

export interface DeviceExclusion {
  /** The device's kernel name path; for a selector value that names no device, the value as written. */
  readonly kname: string;
  /** The device's path, when it differs from kname (e.g. "/dev/mapper/crypt-a" for "/dev/dm-3"). */
  readonly path?: string;
  /** One sentence each, naming the device, e.g. "/dev/sda1 is mounted at /boot". */
  readonly reasons: readonly string[];
}

/** How a thin pool's size is set by this plan. */
export interface ThinPoolPlan {
  readonly name: string;
  readonly deviceClass: string;
  /** The pool exists now. */
  readonly exists: boolean;
  /** Data extents now (existing pool). */
  readonly extents?: number;
  /** Data extents after this plan, when the planner computes them exactly. */
  readonly targetExtents?: number;
  /** When the size is left to lvm because the VG's extent count changes in this plan: e.g. "90%VG". */
  readonly targetPercent?: string;
}

export interface VolumeGroupPlan {
  readonly name: string;
  readonly claimed: readonly DeviceClaim[];
  readonly excluded: readonly DeviceExclusion[];
  /** The volume group exists on the node now and carries the owner tag. */
  readonly exists?: boolean;
  /** The selector uses `Any`: the group only takes devices no other volume group selects. */
  readonly wildcard?: boolean;
  /** Members the selector no longer picks: moved off and removed by this plan, or blocked. */
  readonly leaving?: readonly DeviceClaim[];
  /** Thin pools of the device classes on this group. */
  readonly thinPools?: readonly ThinPoolPlan[];
}

/** Something the planner will not do, and why; a node with blocked entries is not converged. */
export interface Blocked {
  readonly volumeGroup?: string;
  readonly device?: string;
  readonly reason: string;
}

/** One TopoLVM lvmd device-class entry (lvmd.yaml `device-classes[]`). */
export interface LvmdDeviceClass {
  readonly name: string;
  readonly "volume-group": string;
  readonly default?: boolean;
  readonly "spare-gb"?: number;
  readonly type?: "thick" | "thin";
  readonly "thin-pool"?: { readonly name: string; readonly "overprovision-ratio": number };
}

/** The content of TopoLVM's lvmd.yaml. */
export interface LvmdConfig {
  readonly "socket-name"?: string;
  readonly "device-classes": readonly LvmdDeviceClass[];
}

export interface NodePlan {
  readonly node: string;
  readonly selected: boolean;
  /** The node set that selected the node, when the plan covers several (planNodes). */
  readonly nodeSet?: string;
  readonly volumeGroups: readonly VolumeGroupPlan[];
  readonly actions: readonly PlanAction[];
  readonly blocked: readonly Blocked[];
  readonly lvmd: LvmdConfig;
  /** sha256 of the canonical JSON of everything above: the agent refuses an apply whose hash differs. */
  readonly hash: string;
}

export interface PlanDocument {
  readonly apiVersion: typeof PLAN_API_VERSION;
  /** The LVMNodeSet the plan was made for (metadata.name), when known. */
  readonly nodeSet?: string;
  readonly nodes: readonly NodePlan[];
}
