import type { LVMNodeSpec } from "../api";
import type { NodeInventory } from "../inventory/types";
import { resolveClaims } from "./claims";
import { canonicalJson, canonicalJsonOnce, sha256Hex } from "./hash";
import { deviceIds } from "./identity";
import { DEFAULT_LVMD_CONFIG_PATH, lvmdWriteAction } from "./lvmd";
import { addToDevicesFile, removeFromDevicesFile } from "./devices-file";
import { indexNode, type NodeIndex } from "./node-index";
import { ownershipOf } from "./ownership";
import { specContext } from "./spec-context";
import { volumeGroupPlan } from "./plan-objects";
import { planThinPools } from "./thin";
import type { ActionOp, Blocked, LvmdConfig, NodePlan, PlanAction, VolumeGroupPlan } from "./types";
import { planVolumeGroup, type VolumeGroupResult } from "./volume-group";

/** What the agent knows besides the inventory. */
export interface PlanOptions {
  /**
   * The node's lvmd.yaml as the agent read it (parsed), or null when there is none. When given, the
   * plan writes lvmd.yaml exactly when it differs from the desired one. When undefined (not read, as
   * in `pulumi-lvm plan` without it), the plan writes it only alongside other changes.
   * @default undefined
   */
  readonly currentLvmdConfig?: LvmdConfig | null;
  /**
   * Where lvmd reads its configuration.
   * @default "/etc/topolvm/lvmd.yaml"
   */
  readonly lvmdConfigPath?: string;
  /**
   * Orphan physical volumes the agent's journal shows it created itself (pvcreate ran, then the agent
   * stopped before vgcreate/vgextend), by the device id the plan gave them (DeviceClaim.id) or as
   * "pv:<uuid>" of the PV pvcreate made. They join without pvcreate or wipe. Any other orphan PV may
   * belong to a volume group whose other disks are missing, and is only reused with
   * forceWipeDevicesAndDestroyAllData.
   * @default []
   * @example ["wwn:0x5000c500a1b2c3d4+serial:ZA1B2C3D", "pv:N4aoUP-tcx0-1ZE5-gaB1-Wrsf-R6hz-vmYrH1"]
   */
  readonly adoptOrphanPvs?: readonly string[];
}

/** The order actions run in: every step of one kind, for all volume groups, before the next kind. */
export const ACTION_ORDER: readonly ActionOp[] = [
  "vgreduce-removemissing", // lvm changes nothing else in a group while it misses a PV
  "wipefs",
  "pvcreate",
  "lvmdevices-adddev",
  "vgcreate",
  "vgextend",
  "pvchange",
  "pvmove",
  "vgreduce",
  "lvmdevices-deldev",
  "pvremove",
  "lvcreate-thinpool",
  "lvextend-thinpool",
  "lvextend-thinpool-metadata",
  "write-lvmd-config",
];

/**
 * Plans one node: which devices each volume group of the spec claims and why others are excluded, and
 * the exact commands that bring the node there, in a safe order. Pure: the same inventory (in any
 * order), spec and options give the same plan and hash. A converged node gets no actions.
 * Throws InventoryError for an inventory it cannot work from.
 */
export function planNode(inventory: NodeInventory, spec: LVMNodeSpec, options: PlanOptions = {}): NodePlan {
  const context = specContext(spec);
  const index = indexNode(inventory);
  const ids = deviceIds(index);
  const ownership = ownershipOf(index, context.volumeGroupNames);
  const adopt = options.adoptOrphanPvs?.length ? new Set(options.adoptOrphanPvs) : NO_ADOPTIONS;
  const claims = resolveClaims(spec, index, ownership, ids, adopt, context.compiled);

  const volumeGroups: VolumeGroupPlan[] = [];
  const actions: PlanAction[] = [];
  const blocked: Blocked[] = [];
  const readyClasses = new Set<string>();
  for (const c of claims) {
    const vg = planVolumeGroup(c, ids, inventory.lvs);
    actions.push(...vg.actions);
    if (vg.changeable) actions.push(...devicesFileSteps(inventory, index, c.vg.name, vg));
    blocked.push(...vg.blocked);
    const { thick, thin: thinClasses } = context.classesOf(c.vg.name);
    if (vg.available) for (const dc of thick) readyClasses.add(dc.name);
    let thinPools: VolumeGroupPlan["thinPools"];
    if (vg.available && vg.changeable && vg.geometry && thinClasses.length) {
      const thin = planThinPools({
        vg: c.vg.name,
        classes: thinClasses,
        lvs: inventory.lvs.filter((lv) => lv.vgName === c.vg.name),
        geometry: vg.geometry,
      });
      actions.push(...thin.actions);
      blocked.push(...thin.blocked);
      thin.ready.forEach((name) => readyClasses.add(name));
      thinPools = thin.pools;
    } else if (vg.available) {
      // A group that cannot change now keeps the pools it has.
      for (const dc of thinClasses)
        if (
          inventory.lvs.some(
            (lv) => lv.vgName === c.vg.name && lv.name === dc.thin!.poolName && lv.attr.startsWith("t"),
          )
        )
          readyClasses.add(dc.name);
    }
    volumeGroups.push(
      volumeGroupPlan({
        name: c.vg.name,
        claimed: vg.claimed,
        excluded: c.excluded,
        exists: c.state.kind === "owned",
        wildcard: c.wildcard,
        ...(vg.leaving.length ? { leaving: vg.leaving } : {}),
        ...(thinPools ? { thinPools } : {}),
      }),
    );
  }

  const lvmd = context.lvmdFor(readyClasses);
  const write = lvmdWriteAction(
    lvmd.config,
    options.currentLvmdConfig,
    options.lvmdConfigPath ?? DEFAULT_LVMD_CONFIG_PATH,
    actions.length > 0,
    lvmd,
  );
  if (write) actions.push(write);
  const ordered = orderActions(actions);
  return withHash(
    { actions: ordered, blocked, lvmd: lvmd.config, node: inventory.node, selected: true, volumeGroups },
    spec,
  );
}

const NO_ADOPTIONS: ReadonlySet<string> = new Set();

/** lvm's devices file kept true for one group: every device it keeps listed, every pvremove unlisted first. */
function devicesFileSteps(
  inventory: NodeInventory,
  index: NodeIndex,
  vg: string,
  planned: VolumeGroupResult,
): PlanAction[] {
  const pvOf = (path: string) => {
    const device = index.byName.get(path);
    return device ? index.pvByKname.get(device.kname) : undefined;
  };
  return [
    ...addToDevicesFile(
      inventory.devicesFile,
      vg,
      // A device pvcreate runs on gets a new PV: whatever the file says of the old one does not count.
      planned.claimed.map((claim) => ({
        claim,
        pv: claim.member || claim.adopted ? index.pvByKname.get(claim.kname) : undefined,
      })),
    ),
    ...removeFromDevicesFile(
      inventory.devicesFile,
      planned.actions.filter((a) => a.op === "pvremove"),
      pvOf,
    ),
  ];
}

/** Sorts actions into `order`, keeping their relative order within a kind (stable sort). */
export function orderActions(
  actions: readonly PlanAction[],
  order: readonly ActionOp[] = ACTION_ORDER,
): PlanAction[] {
  const ranks = rankOf(order);
  // A counting sort: each action's rank looked up once, kinds not in `order` (rank -1) first.
  const rank = new Int32Array(actions.length);
  const counts = new Int32Array(order.length + 1);
  for (let i = 0; i < actions.length; i++) {
    rank[i] = (ranks.get(actions[i]!.op) ?? -1) + 1;
    counts[rank[i]!]!++;
  }
  for (let r = 1; r < counts.length; r++) counts[r]! += counts[r - 1]!;
  const out = new Array<PlanAction>(actions.length);
  for (let i = actions.length - 1; i >= 0; i--) out[--counts[rank[i]!]!] = actions[i]!;
  return out;
}

const ranksByOrder = new WeakMap<readonly ActionOp[], ReadonlyMap<ActionOp, number>>();

/** Each op's position in `order` (its first, as indexOf gives it). */
function rankOf(order: readonly ActionOp[]): ReadonlyMap<ActionOp, number> {
  let ranks = ranksByOrder.get(order);
  if (!ranks) {
    const map = new Map<ActionOp, number>();
    order.forEach((op, i) => map.has(op) || map.set(op, i));
    ranksByOrder.set(order, (ranks = map));
  }
  return ranks;
}

/**
 * Adds the hash: sha256 of the canonical JSON of the node plan together with the spec it was made
 * for, so the agent can refuse to apply a plan that is not the one it would make now.
 */
export function withHash(plan: Omit<NodePlan, "hash">, spec: LVMNodeSpec | undefined): NodePlan {
  // The canonical JSON of {plan, spec}, with the spec's text computed once for all nodes sharing it.
  const hash = sha256Hex(
    '{"plan":',
    canonicalJson(plan),
    ',"spec":',
    spec ? canonicalJsonOnce(spec) : "null",
    "}",
  );
  const { actions, blocked, lvmd, node, nodeSet, selected, volumeGroups } = plan;
  return {
    actions,
    blocked,
    hash,
    lvmd,
    node,
    ...(nodeSet !== undefined ? { nodeSet } : {}),
    selected,
    volumeGroups,
  };
}
