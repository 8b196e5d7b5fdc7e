import type { ApprovalPolicy } from "../api/approval";
import type { ActionOp, NodePlan, PlanAction } from "./types";

/**
 * Which steps of a plan wait for a person under each approval policy (docs/operator.md, Reviewed
 * changes), pure. Destructive holds a step back when it destroys or moves data that exists, or
 * puts a device nobody reviewed into a volume group that already serves volumes; building a new
 * group on blank devices (the change a person just made to the spec), tagging, growing and
 * writing lvmd.yaml go ahead.
 */

/** Why each kind of step is held back under Destructive; undefined: it is not. */
export const DESTRUCTIVE_REASONS: Readonly<Record<ActionOp, string | undefined>> = {
  "vgreduce-removemissing":
    "takes missing devices out of the volume group (missingDevicePolicy): should one come back, it is no longer a member",
  wipefs: "erases the signatures on the device (a filesystem, partition table or foreign LVM metadata)",
  pvcreate: undefined, // held back only for a device joining a group that exists (joinsExistingGroup)
  // keeps lvm's devices file true for a device this plan claims (held with its pvcreate) or a member
  // the file lost (a repair): nothing on the device changes
  "lvmdevices-adddev": undefined,
  "lvmdevices-deldev": "takes the device out of lvm's devices file: the host's lvm no longer sees it",
  vgcreate: undefined,
  vgextend: undefined, // the same
  pvchange: undefined,
  pvmove: "moves the volume group's data off a device",
  vgreduce: "takes a device out of the volume group",
  pvremove: "erases the LVM label of a device",
  "lvcreate-thinpool": undefined,
  "lvextend-thinpool": undefined,
  "lvextend-thinpool-metadata": undefined,
  "lvchange-deactivate": "deactivates a thin pool: its volumes stop being usable",
  "lvremove-thinpool": "removes a thin pool and every volume in it",
  vgremove: "removes a volume group",
  "write-lvmd-config": undefined,
};

const JOIN_REASON =
  "claims a device for a volume group that exists already: a device that appeared later, nobody reviewed it";

/** One step that waits, with its index in the plan and why. */
export interface HeldStep {
  readonly index: number;
  readonly op: ActionOp;
  readonly device?: string;
  readonly why: string;
}

type PlanView = Pick<NodePlan, "actions"> & {
  readonly volumeGroups: ReadonlyArray<Pick<NodePlan["volumeGroups"][number], "name" | "exists">>;
};

/**
 * The steps of `plan` that wait for an approval under `policy`, in plan order. `claimedBefore`: the
 * devices (paths or stable ids) the node's volume groups held before (the LVMNode's status): one of
 * them rejoining its group (after an out-of-band vgreduce) is a repair, not a new device.
 */
export function stepsNeedingApproval(
  plan: PlanView,
  policy: ApprovalPolicy,
  claimedBefore: ReadonlySet<string> = new Set(),
): HeldStep[] {
  if (policy === "Automatic")
    return plan.actions.flatMap((a, index) => {
      const why = whyAlwaysHeld(a);
      return why ? [{ index, op: a.op, ...(a.device ? { device: a.device } : {}), why }] : [];
    });
  const existing = new Set(plan.volumeGroups.filter((vg) => vg.exists).map((vg) => vg.name));
  const known = (a: PlanAction) =>
    (a.device !== undefined && claimedBefore.has(a.device)) ||
    (a.deviceId !== undefined && claimedBefore.has(a.deviceId));
  return plan.actions.flatMap((a, index) => {
    const why =
      policy === "Always"
        ? (whyDestructive(a, known(a) ? new Set() : existing) ?? "every step waits (Always)")
        : whyDestructive(a, known(a) ? new Set() : existing);
    return why ? [{ index, op: a.op, ...(a.device ? { device: a.device } : {}), why }] : [];
  });
}

const LOSES_VOLUMES =
  "removes logical volumes with the missing devices, and their data (missingDevicePolicy RemoveWithLostVolumes): waits for an approval under every approvalPolicy";

/** Why `action` waits for a person under every policy, Automatic too: it removes volumes people use. */
export function whyAlwaysHeld(action: Pick<PlanAction, "op" | "lostVolumes">): string | undefined {
  return action.op === "vgreduce-removemissing" && action.lostVolumes?.length ? LOSES_VOLUMES : undefined;
}

/** Why `action` is held back under Destructive, or undefined. */
export function whyDestructive(
  action: Pick<PlanAction, "op" | "volumeGroup" | "lostVolumes">,
  existingGroups: ReadonlySet<string>,
): string | undefined {
  const reason = whyAlwaysHeld(action) ?? DESTRUCTIVE_REASONS[action.op];
  if (reason) return reason;
  const joins = action.op === "pvcreate" || action.op === "vgextend";
  return joins && action.volumeGroup !== undefined && existingGroups.has(action.volumeGroup)
    ? JOIN_REASON
    : undefined;
}
