import type { DeviceClass, LVMNodeSpec } from "../api";
import type { LogicalVolume, NodeInventory } from "../inventory/types";
import { lvchangeDeactivateArgv, lvremoveArgv, pvremoveArgv, vgremoveArgv } from "./argv";
import { removeFromDevicesFile } from "./devices-file";
import { deviceIds } from "./identity";
import { DEFAULT_LVMD_CONFIG_PATH, lvmdConfigFor, lvmdWriteAction } from "./lvmd";
import { indexNode, joinNames } from "./node-index";
import { ownershipOf } from "./ownership";
import { step, volumeGroupPlan } from "./plan-objects";
import { orderActions, withHash } from "./plan-node";
import { memberClaim } from "./volume-group";
import type { ActionOp, Blocked, NodePlan, PlanAction, VolumeGroupPlan } from "./types";

export interface TeardownOptions {
  /**
   * The one volume group to remove; all of the spec's when omitted.
   * @default undefined
   */
  readonly volumeGroup?: string;
  /**
   * Remove groups that still hold logical volumes other than our thin pools (TopoLVM's volumes
   * included), destroying their data. Without it such a group is blocked, with the list of volumes.
   */
  readonly force: boolean;
  /** @default "/etc/topolvm/lvmd.yaml" */
  readonly lvmdConfigPath?: string;
  /**
   * Orphan PVs (in no volume group) this agent created itself, by identity ("pv:<uuid>", or the
   * device's stable id): an apply stopped between pvcreate and vgcreate (the agent killed, the node
   * deselected meanwhile) left them. A teardown of every group of the spec removes their label too;
   * any other orphan PV is not ours and stays. @default none
   */
  readonly ownOrphanPvs?: readonly string[];
}

/** The order a teardown runs in: lvmd stops using the groups before anything is removed. */
export const TEARDOWN_ORDER: readonly ActionOp[] = [
  "write-lvmd-config",
  "lvchange-deactivate",
  "lvremove-thinpool",
  "vgremove",
  "lvmdevices-deldev",
  "pvremove",
];

/**
 * Plans removing our volume groups from a node: first lvmd.yaml without their device classes (so no
 * new volume lands in them), then for each group: deactivate and remove its thin pools, remove the
 * group, and remove the LVM label from its physical volumes (each out of lvm's devices file first,
 * when the host uses one). Only groups that carry our tag are
 * touched. A group with other logical volumes is blocked unless `force`, which removes the group with
 * everything in it (`vgremove --force`, marked destructive). A group that is already gone needs nothing.
 * A teardown of every group also removes the label of the orphan PVs this agent created
 * (`ownOrphanPvs`).
 */
export function planTeardown(
  inventory: NodeInventory,
  spec: LVMNodeSpec,
  options: TeardownOptions,
): NodePlan {
  const index = indexNode(inventory);
  const ids = deviceIds(index);
  const specNames = spec.volumeGroups.map((vg) => vg.name);
  const ownership = ownershipOf(index, specNames);
  const blocked: Blocked[] = [];
  const actions: PlanAction[] = [];
  const volumeGroups: VolumeGroupPlan[] = [];

  if (options.volumeGroup !== undefined && !specNames.includes(options.volumeGroup))
    blocked.push({
      volumeGroup: options.volumeGroup,
      reason: `volume group ${options.volumeGroup} is not in this node's spec (it has ${joinNames(specNames)}), so teardown does not touch it`,
    });
  const targets = specNames.filter(
    (name) => options.volumeGroup === undefined || name === options.volumeGroup,
  );
  const removed = new Set<string>();

  for (const vg of targets) {
    const state = ownership.vgState(vg);
    if (state.kind === "absent") continue;
    if (state.kind === "foreign") {
      blocked.push({
        volumeGroup: vg,
        reason: `volume group ${vg} does not carry the pulumi-lvm tag; teardown does not touch it`,
      });
      continue;
    }
    if (state.missing.length) {
      blocked.push({
        volumeGroup: vg,
        reason: `volume group ${vg} is missing physical volumes ${joinNames(state.missing.map((pv) => pv.uuid))}; remove it by hand`,
      });
      continue;
    }
    const lvs = inventory.lvs.filter((lv) => lv.vgName === vg);
    const poolNames = new Set(
      (spec.deviceClasses ?? [])
        .filter((dc) => dc.volumeGroup === vg && dc.thin)
        .map((dc) => dc.thin!.poolName),
    );
    const pools = lvs.filter((lv) => poolNames.has(lv.name) && lv.attr.startsWith("t") && !lv.hidden);
    const others = lvs.filter((lv) => !internal(lv) && !pools.includes(lv));
    if (others.length && !options.force) {
      blocked.push({
        volumeGroup: vg,
        reason: `volume group ${vg} still holds logical volumes ${joinNames(others.map((lv) => lv.name))}; teardown removes it only with force, which destroys them`,
      });
      continue;
    }
    removed.add(vg);
    const members = state.members.map((m) => memberClaim(m, ids));
    volumeGroups.push(
      volumeGroupPlan({ name: vg, claimed: [], excluded: [], exists: true, leaving: members }),
    );
    const on = { volumeGroup: vg };
    if (others.length) {
      actions.push(
        step(
          "vgremove",
          vgremoveArgv(vg, true),
          `remove volume group ${vg} with every logical volume in it (force): destroys ${joinNames(others.map((lv) => lv.name))}`,
          { ...on, destructive: true },
        ),
      );
    } else {
      for (const pool of pools) {
        actions.push(
          step(
            "lvchange-deactivate",
            lvchangeDeactivateArgv(vg, pool.name),
            `deactivate thin pool ${vg}/${pool.name} (fails while any volume in it is open)`,
            on,
          ),
        );
        actions.push(
          step(
            "lvremove-thinpool",
            lvremoveArgv(vg, pool.name),
            `remove thin pool ${vg}/${pool.name}, which holds no volumes`,
            on,
          ),
        );
      }
      actions.push(step("vgremove", vgremoveArgv(vg), `remove volume group ${vg}`, on));
    }
    for (const m of members)
      actions.push(
        step("pvremove", pvremoveArgv(m.path!), `remove the LVM label from ${m.path}, which was in ${vg}`, {
          ...on,
          device: m.path,
          deviceId: m.id,
        }),
      );
  }

  if (options.volumeGroup === undefined && options.ownOrphanPvs?.length) {
    const own = new Set(options.ownOrphanPvs);
    for (const [kname, pv] of index.pvByKname) {
      if (pv.vgName !== "") continue;
      const id = ids.get(kname);
      if (!own.has(`pv:${pv.uuid}`) && !(id && own.has(id))) continue;
      actions.push(
        step(
          "pvremove",
          pvremoveArgv(pv.device),
          `remove the LVM label this agent wrote to ${pv.device} (pvcreate) before it joined a volume group`,
          { device: pv.device, deviceId: id ?? `pv:${pv.uuid}` },
        ),
      );
    }
  }

  // lvm's devices file: each device whose label goes leaves the file first (./devices-file.ts).
  actions.push(
    ...removeFromDevicesFile(
      inventory.devicesFile,
      actions.filter((a) => a.op === "pvremove"),
      (path) => {
        const device = index.byName.get(path);
        return device ? index.pvByKname.get(device.kname) : undefined;
      },
    ),
  );

  const lvmd = lvmdConfigFor(
    spec,
    (dc: DeviceClass) =>
      !removed.has(dc.volumeGroup) && existsNow(dc, inventory, ownership.vgState(dc.volumeGroup).kind),
  );
  const write = actions.length
    ? lvmdWriteAction(lvmd, null, options.lvmdConfigPath ?? DEFAULT_LVMD_CONFIG_PATH, true)
    : undefined;
  const ordered = orderActions([...(write ? [write] : []), ...actions], TEARDOWN_ORDER);
  return withHash(
    { node: inventory.node, selected: true, volumeGroups, actions: ordered, blocked, lvmd },
    spec,
  );
}

/** lvm's own volumes: thin pool data/metadata, the pmspare, anything it shows in brackets. */
function internal(lv: LogicalVolume): boolean {
  return (
    lv.hidden === true ||
    /_(tdata|tmeta|pmspare|cdata|cmeta|rimage_\d+|rmeta_\d+|mimage_\d+|mlog|vorigin)$/.test(lv.name) ||
    lv.name === "lvol0_pmspare"
  );
}

function existsNow(dc: DeviceClass, inventory: NodeInventory, kind: string): boolean {
  if (kind !== "owned") return false;
  if (dc.strategy === "Thick") return true;
  return inventory.lvs.some(
    (lv) => lv.vgName === dc.volumeGroup && lv.name === dc.thin!.poolName && lv.attr.startsWith("t"),
  );
}
