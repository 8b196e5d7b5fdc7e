import type { MissingDevicePolicy } from "../api/template";
import { parseLvAttr } from "../inventory/lv-attr";
import type { LogicalVolume, PhysicalVolume } from "../inventory/types";
import { vgreduceRemoveMissingArgv } from "./argv";
import { joinNames, sortNatural } from "./node-index";
import { step } from "./plan-objects";
import type { Blocked, PlanAction } from "./types";

/**
 * A volume group of ours whose physical volumes are missing (a disk died or was pulled), planned by
 * its missingDevicePolicy (docs/disk-failure.md). Pure. lvm changes nothing else in
 * such a group, so this is all the plan does in it: the group's other changes come in the next plan.
 *
 * - Wait (the default): nothing; blocked, naming the missing volumes and what they held.
 * - RemoveFromGroup: `vgreduce --removemissing`, only when no logical volume has data on them
 *   (lvm itself refuses then); otherwise blocked, naming those logical volumes.
 * - RemoveWithLostVolumes: the same, with `--force` when logical volumes have data on them: the
 *   step is destructive and names each one (lostVolumes), and waits for an approval of its hash
 *   under every approvalPolicy (planner/approval.ts).
 */
export interface MissingDevicesPlan {
  readonly actions: readonly PlanAction[];
  readonly blocked: readonly Blocked[];
}

export const DEFAULT_MISSING_DEVICE_POLICY: MissingDevicePolicy = "Wait";

export function planMissingDevices(
  vg: string,
  policy: MissingDevicePolicy | undefined,
  missing: readonly PhysicalVolume[],
  lvs: readonly LogicalVolume[],
): MissingDevicesPlan {
  const pvs = missing.map((pv) => `pv:${pv.uuid}`);
  const lost = lostVolumes(lvs.filter((lv) => lv.vgName === vg));
  const one = pvs.length === 1;
  const what = `${one ? "physical volume" : "physical volumes"} ${joinNames(pvs)}`;
  const holding = lost.length
    ? `, which ${one ? "holds" : "hold"} data of ${lost.length === 1 ? "logical volume" : "logical volumes"} ${joinNames(lost)}`
    : "";
  const blocked = (reason: string): MissingDevicesPlan => ({
    actions: [],
    blocked: [{ volumeGroup: vg, reason: `volume group ${vg} is missing ${what}${holding}; ${reason}` }],
  });
  switch (policy ?? DEFAULT_MISSING_DEVICE_POLICY) {
    case "Wait":
      return blocked(
        `nothing changes in it until ${one ? "it is" : "they are"} back, or until its missingDevicePolicy removes ${one ? "it" : "them"} (${lost.length ? "RemoveWithLostVolumes" : "RemoveFromGroup"})`,
      );
    case "RemoveFromGroup":
      if (lost.length)
        return blocked(
          `missingDevicePolicy RemoveFromGroup does not remove logical volumes: bring the disk back, or set RemoveWithLostVolumes to remove them with it (their data is lost)`,
        );
      return { actions: [removeMissing(vg, pvs, [])], blocked: [] };
    case "RemoveWithLostVolumes":
      return { actions: [removeMissing(vg, pvs, lost)], blocked: [] };
  }
}

function removeMissing(vg: string, pvs: readonly string[], lost: readonly string[]): PlanAction {
  const one = pvs.length === 1;
  const base = `remove the missing ${one ? "physical volume" : "physical volumes"} ${joinNames(pvs)} from ${vg} (${one ? "its device is" : "their devices are"} gone; should ${one ? "it" : "one"} come back, it is no longer a member)`;
  const reason = lost.length
    ? `${base}, and with ${one ? "it" : "them"} the ${lost.length === 1 ? "logical volume" : "logical volumes"} ${joinNames(lost)}, whose data is lost`
    : base;
  return step("vgreduce-removemissing", vgreduceRemoveMissingArgv(vg, lost.length > 0), reason, {
    volumeGroup: vg,
    missingPvs: pvs,
    ...(lost.length ? { destructive: true, lostVolumes: lost.map((lv) => `${vg}/${lv}`) } : {}),
  });
}

/**
 * The logical volumes of one group that have data on a missing physical volume, by name, sorted: every
 * one lvm reports partial; a thin pool whose hidden data or metadata volume is partial; every thin
 * volume of such a pool. A partial hidden volume with no visible owner (a pool's metadata spare) is
 * named in brackets, as lvs -a shows it.
 */
export function lostVolumes(lvs: readonly LogicalVolume[]): string[] {
  const partial = (lv: LogicalVolume) => lv.attr.length === 10 && parseLvAttr(lv.attr).health === "partial";
  const visible = new Set(lvs.filter((lv) => !lv.hidden).map((lv) => lv.name));
  const lost = new Set<string>();
  for (const lv of lvs.filter(partial)) {
    if (!lv.hidden) lost.add(lv.name);
    else {
      const owner = thinPoolOf(lv.name);
      lost.add(owner !== lv.name && visible.has(owner) ? owner : `[${lv.name}]`);
    }
  }
  for (const lv of lvs) if (!lv.hidden && lv.poolLv !== undefined && lost.has(lv.poolLv)) lost.add(lv.name);
  return sortNatural([...lost], (name) => name);
}

/** The thin pool a hidden data or metadata volume belongs to ("pool0_tdata" → "pool0"); other names as they are. */
export function thinPoolOf(name: string): string {
  return name.replace(/_t(?:data|meta)$/, "");
}
