/**
 * The plan: what the planner decided for each node, and the exact lvm commands to get there.
 * JSON form documented in docs/plan-format.md, apiVersion "pulumi-lvm.dev/plan/v1".
 * The agent executes `actions` in order and nothing else; a device not in a plan is never written.
 */

export const PLAN_API_VERSION = "pulumi-lvm.dev/plan/v1";

/** The kinds of step a plan can hold, in the order they may appear. */
export type ActionOp =
  | "wipefs" // erase signatures (only with forceWipeDevicesAndDestroyAllData)
  | "pvcreate"
  | "vgcreate"
  | "vgextend"
  | "pvmove" // move extents off a PV leaving the selector
  | "vgreduce"
  | "pvremove"
  | "lvcreate-thinpool"
  | "lvextend-thinpool"
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
  /** One sentence for people: why this step. */
  readonly reason: string;
  /** True when the step destroys data that exists now (wipefs). */
  readonly destructive?: boolean;
}

export interface DeviceClaim {
  readonly kname: string;
  /** Stable identity: "wwn:<wwn>+serial:<serial>", else "by-id:<link>", else "pv:<uuid>", else "kname:<path>". */
  readonly id: string;
  readonly size: number;
  /** Already a PV of this volume group. */
  readonly member: boolean;
  /** Signatures that will be wiped first (only with the opt-in). */
  readonly wipe?: readonly string[];
}

export interface DeviceExclusion {
  readonly kname: string;
  /** One sentence each, naming the device, e.g. "/dev/sda1 is mounted at /boot". */
  readonly reasons: readonly string[];
}

export interface VolumeGroupPlan {
  readonly name: string;
  readonly claimed: readonly DeviceClaim[];
  readonly excluded: readonly DeviceExclusion[];
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

export interface NodePlan {
  readonly node: string;
  readonly selected: boolean;
  readonly volumeGroups: readonly VolumeGroupPlan[];
  readonly actions: readonly PlanAction[];
  readonly blocked: readonly Blocked[];
  readonly lvmd: { readonly "device-classes": readonly LvmdDeviceClass[] };
  /** sha256 of the canonical JSON of everything above: the agent refuses an apply whose hash differs. */
  readonly hash: string;
}

export interface PlanDocument {
  readonly apiVersion: typeof PLAN_API_VERSION;
  readonly nodes: readonly NodePlan[];
}
