import type { NodeInventory } from "../inventory/types";
import type { NodePlan, PlanAction } from "../planner/types";
import { devicesOf, type LvmState } from "./action-checks";
import { actionDeviceIds, deviceIdsOf } from "./approval";
import { verifyDeviceIdentity, type IdentityProbeDeps } from "./device-identity";
import { AgentError } from "./errors";
import type { ApprovedDevice } from "./journal";
import { ALL_VG_NAMES_ARGV, type Runner } from "./lvm-runner";

/*
 * The safety re-checks of an operation (src/agent/apply.ts) against the machine as it is now, beyond
 * the plan: volume group names taken outside this agent's devices, and each device's identity right
 * before a step writes to it.
 */

/**
 * A confined agent (--devices) sees only its own devices; a volume group it creates must not take a
 * name that exists on other devices of the machine (lvm would then refuse both). Only the names are
 * read, unconfined. An unconfined agent (`confined` false) reads nothing more: its discovery saw every
 * group the same lvm configuration shows, the plan's groups were checked against those, and its
 * vgcreate sees every device, so lvm itself refuses a name that exists ("A volume group called ...
 * already exists") instead of making a second group of that name behind a filter.
 */
export async function checkVolumeGroupNames(
  run: Runner,
  inventory: NodeInventory,
  plan: NodePlan,
  confined = true,
): Promise<void> {
  if (!confined) return;
  const creates = plan.actions.filter((a) => a.op === "vgcreate" && a.volumeGroup).map((a) => a.volumeGroup!);
  const ours = new Set(inventory.vgs.map((v) => v.name));
  const wanted = creates.filter((n) => !ours.has(n));
  if (!wanted.length) return;
  let names: string[];
  try {
    const out = await run(ALL_VG_NAMES_ARGV, { unconfined: true });
    const parsed = JSON.parse(out.stdout) as { report?: Array<{ vg?: Array<{ vg_name?: string }> }> };
    names = (parsed.report ?? []).flatMap((r) => r.vg ?? []).map((v) => v.vg_name ?? "");
  } catch (e) {
    throw new AgentError(
      500,
      "DiscoveryFailed",
      `cannot list the volume group names on this machine before creating ${wanted.join(", ")}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const taken = wanted.filter((n) => names.includes(n));
  if (taken.length)
    throw new AgentError(
      409,
      "VolumeGroupNameTaken",
      `volume group ${taken.join(", ")} already exists on this machine, on devices outside this agent's --devices; lvm would refuse both groups. Choose another name`,
      { volumeGroups: taken },
    );
}

/**
 * The device identity check of each step: right before a step writes to a device, a fresh probe must
 * find the identity that the step itself, the approved devices or the fresh plan gives it. `state`
 * is the operation's running state (its aliases name a device's canonical path as steps change it).
 */
export function deviceIdentityCheck(
  state: LvmState,
  approved: readonly ApprovedDevice[],
  fresh: NodePlan,
  probe: IdentityProbeDeps,
): (action: PlanAction) => Promise<void> {
  const approvedIds = new Map(approved.map((d) => [canon(state, d.kname), d.id]));
  const freshIds = new Map([...deviceIdsOf(fresh)].map(([d, id]) => [canon(state, d), id]));
  return async (action) => {
    const ownIds = actionDeviceIds(action);
    for (const device of devicesOf(action)) {
      const expected = [
        ...optional(ownIds.get(device)),
        ...optional(approvedIds.get(canon(state, device))),
        ...optional(freshIds.get(canon(state, device))),
      ];
      await verifyDeviceIdentity(probe, device, expected);
    }
  };
}

function canon(state: LvmState, device: string): string {
  return state.aliases.get(device) ?? device;
}

function optional<T>(value: T | undefined): T[] {
  return value === undefined ? [] : [value];
}
