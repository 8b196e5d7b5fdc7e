import type { NodeInventory } from "../inventory/types";
import { OWNER_TAG } from "../inventory/types";
import { optionValue, parseArgv } from "../planner/argv";
import { thinPoolOf } from "../planner/missing-devices";
import type { PlanAction } from "../planner/types";

/**
 * What the agent knows about LVM on its devices while it executes a plan: built from the inventory
 * it re-discovered before acting, then updated with the effect of every step it completes. Each step
 * is checked against it first, so a step whose postcondition already holds (an apply repeated after
 * a crash) is skipped instead of run twice, and a step whose precondition is broken fails with a
 * reason instead of running.
 */
export interface LvmState {
  /** PV device (kname path) → its VG ("" when in none), how much of it is in use, its tags. */
  readonly pvs: Map<string, { vg: string; used: number; tags: readonly string[] }>;
  /** VG name → its tags. */
  readonly vgs: Map<string, { tags: readonly string[] }>;
  /** "vg/lv" → lv_attr. */
  readonly lvs: Map<string, string>;
  /** "vg/pool" → its metadata LV's size in bytes, for thin pools whose size is known now. */
  readonly thinMetadata: Map<string, number>;
  /** Any device path or udev symlink the inventory knows → the kname path. */
  readonly aliases: Map<string, string>;
  /** VG name → its missing physical volumes ("pv:<uuid>"), for groups that miss any. */
  readonly missingPvs: Map<string, readonly string[]>;
}

export type Decision = { readonly run: true } | { readonly run: false; readonly skipped: string };

/** A step whose precondition does not hold; it must not run. */
export class ActionRefusedError extends Error {
  constructor(
    readonly action: PlanAction,
    reason: string,
  ) {
    super(`${action.argv.join(" ") || action.op}: ${reason}`);
    this.name = "ActionRefusedError";
  }
}

export function stateFromInventory(inventory: NodeInventory): LvmState {
  const aliases = new Map<string, string>();
  for (const d of inventory.devices) {
    aliases.set(d.kname, d.kname);
    aliases.set(d.path, d.kname);
    for (const link of d.symlinks) aliases.set(link, d.kname);
  }
  const canon = (p: string) => aliases.get(p) ?? p;
  return {
    pvs: new Map(
      inventory.pvs.map((pv) => [
        canon(pv.device),
        { vg: pv.vgName, used: Math.max(0, pv.size - pv.free), tags: pv.tags },
      ]),
    ),
    vgs: new Map(inventory.vgs.map((vg) => [vg.name, { tags: vg.tags }])),
    lvs: new Map(inventory.lvs.map((lv) => [`${lv.vgName}/${lv.name}`, lv.attr])),
    thinMetadata: new Map(
      inventory.lvs
        .filter((lv) => lv.metadataSize !== undefined && !lv.hidden)
        .map((lv) => [`${lv.vgName}/${lv.name}`, lv.metadataSize!]),
    ),
    aliases,
    missingPvs: missingPvsByGroup(inventory, aliases),
  };
}

/** A PV lvm reports missing, or whose device is not on the node (as the planner's node index sees it). */
function missingPvsByGroup(
  inventory: NodeInventory,
  aliases: ReadonlyMap<string, string>,
): Map<string, readonly string[]> {
  const out = new Map<string, string[]>();
  for (const pv of inventory.pvs.filter((p) => p.vgName && (p.missing || !aliases.has(p.device))))
    out.set(pv.vgName, [...(out.get(pv.vgName) ?? []), `pv:${pv.uuid}`]);
  return out;
}

/**
 * Decides whether `action` runs, is skipped (its postcondition already holds), or is refused.
 * `wiped` maps the identities of devices the journal says were already wiped to the operation
 * that wiped them: a device is never wiped twice.
 */
export function decide(action: PlanAction, state: LvmState, wiped: ReadonlyMap<string, string>): Decision {
  const canon = (p: string) => state.aliases.get(p) ?? p;
  const vg = volumeGroupOf(action);
  const devices = devicesOf(action).map(canon);
  const refuse = (reason: string): never => {
    throw new ActionRefusedError(action, reason);
  };
  switch (action.op) {
    case "wipefs": {
      const device = devices[0] ?? refuse("names no device");
      const key = action.deviceId ?? `kname:${action.device ?? device}`;
      const by = wiped.get(key);
      if (by)
        return {
          run: false,
          skipped: `${device} (${key}) was already wiped by operation ${by}; a device is never wiped twice`,
        };
      const pv = state.pvs.get(device);
      if (pv && vg && pv.vg === vg)
        return { run: false, skipped: `${device} is already a physical volume of ${vg}` };
      return { run: true };
    }
    case "pvcreate": {
      const device = devices[0] ?? refuse("names no device");
      const pv = state.pvs.get(device);
      if (!pv) return { run: true };
      if (pv.vg === "" || pv.vg === vg)
        return {
          run: false,
          skipped: `${device} is already a physical volume${pv.vg ? ` of ${pv.vg}` : ""}`,
        };
      return refuse(`${device} is a physical volume of another volume group, ${pv.vg}`);
    }
    case "vgcreate": {
      const name = vg ?? refuse("names no volume group");
      const existing = state.vgs.get(name);
      if (!existing) {
        for (const d of devices) {
          const pv = state.pvs.get(d);
          if (pv?.vg) refuse(`${d} is already in volume group ${pv.vg}`);
        }
        return { run: true };
      }
      if (!existing.tags.includes(OWNER_TAG))
        return refuse(`volume group ${name} exists and was not created by pulumi-lvm (no tag ${OWNER_TAG})`);
      const outside = devices.filter((d) => state.pvs.get(d)?.vg !== name);
      if (outside.length)
        return refuse(`volume group ${name} exists without ${outside.join(", ")}; the plan is out of date`);
      return { run: false, skipped: `volume group ${name} already exists with tag ${OWNER_TAG}` };
    }
    case "vgextend": {
      const name = vg ?? refuse("names no volume group");
      if (!state.vgs.has(name)) return refuse(`volume group ${name} does not exist`);
      const missing = devices.filter((d) => state.pvs.get(d)?.vg !== name);
      for (const d of missing) {
        const other = state.pvs.get(d)?.vg;
        if (other) refuse(`${d} is in volume group ${other}`);
      }
      if (missing.length === 0) return { run: false, skipped: `${devices.join(", ")} already in ${name}` };
      return { run: true };
    }
    case "pvchange": {
      const device = devices[0] ?? refuse("names no device");
      const tag = optionValue(parseArgv(action.argv), "--addtag") ?? refuse("adds no tag");
      const pv = state.pvs.get(device) ?? refuse(`${device} is not a physical volume`);
      if (pv.tags.includes(tag)) return { run: false, skipped: `${device} already carries tag ${tag}` };
      return { run: true };
    }
    case "pvmove": {
      const device = devices[0] ?? refuse("names no device");
      const pv = state.pvs.get(device);
      if (!pv || pv.used === 0) return { run: false, skipped: `no extents allocated on ${device}` };
      return { run: true };
    }
    case "vgreduce": {
      const name = vg ?? refuse("names no volume group");
      const inGroup = devices.filter((d) => state.pvs.get(d)?.vg === name);
      if (inGroup.length === 0) return { run: false, skipped: `${devices.join(", ")} not in ${name}` };
      const busy = inGroup.filter((d) => (state.pvs.get(d)?.used ?? 0) > 0);
      if (busy.length) return refuse(`${busy.join(", ")} still holds allocated extents`);
      return { run: true };
    }
    case "vgreduce-removemissing":
      return decideRemoveMissing(action, vg ?? refuse("names no volume group"), state, refuse);
    case "lvmdevices-adddev": {
      // lvm answers 0 for a device it lists already: repeating the step after a crash is safe.
      const device = devices[0] ?? refuse("names no device");
      if (!state.pvs.has(device)) return refuse(`${device} is not a physical volume`);
      return { run: true };
    }
    case "lvmdevices-deldev": {
      // Not listed: lvm fails "No devices file entry", which the step takes as done (step-execution.ts).
      const device = devices[0] ?? refuse("names no device");
      const pv = state.pvs.get(device);
      if (pv?.vg) return refuse(`${device} is still in volume group ${pv.vg}: the host's lvm would lose it`);
      return { run: true };
    }
    case "pvremove": {
      const device = devices[0] ?? refuse("names no device");
      const pv = state.pvs.get(device);
      if (!pv) return { run: false, skipped: `${device} is not a physical volume` };
      if (pv.vg) return refuse(`${device} is still in volume group ${pv.vg}`);
      return { run: true };
    }
    case "lvcreate-thinpool": {
      const key = logicalVolumeOf(action) ?? refuse("names no logical volume");
      const attr = state.lvs.get(key);
      if (attr === undefined) return { run: true };
      if (!attr.startsWith("t")) return refuse(`${key} exists and is not a thin pool (lv_attr ${attr})`);
      return { run: false, skipped: `thin pool ${key} already exists` };
    }
    case "lvextend-thinpool": {
      const key = logicalVolumeOf(action) ?? refuse("names no logical volume");
      if (!state.lvs.has(key)) return refuse(`thin pool ${key} does not exist`);
      return { run: true };
    }
    case "lvextend-thinpool-metadata": {
      const key = logicalVolumeOf(action) ?? refuse("names no logical volume");
      const attr = state.lvs.get(key);
      if (attr === undefined) return refuse(`thin pool ${key} does not exist`);
      if (!attr.startsWith("t")) return refuse(`${key} is not a thin pool (lv_attr ${attr})`);
      const target = byteCount(optionValue(parseArgv(action.argv), "--poolmetadatasize"));
      if (target === undefined) return refuse("expected --poolmetadatasize <bytes>b");
      const now = state.thinMetadata.get(key);
      if (now !== undefined && now >= target)
        return {
          run: false,
          skipped: `the metadata of thin pool ${key} already has ${now} bytes (at least ${target})`,
        };
      return { run: true };
    }
    case "lvchange-deactivate": {
      const key = logicalVolumeOf(action) ?? refuse("names no logical volume");
      const attr = state.lvs.get(key);
      if (attr === undefined) return { run: false, skipped: `${key} does not exist` };
      if (attr[4] === "-") return { run: false, skipped: `${key} is not active` };
      return { run: true };
    }
    case "lvremove-thinpool": {
      const key = logicalVolumeOf(action) ?? refuse("names no logical volume");
      if (!state.lvs.has(key)) return { run: false, skipped: `${key} does not exist` };
      return { run: true };
    }
    case "vgremove": {
      const name = vg ?? refuse("names no volume group");
      const existing = state.vgs.get(name);
      if (!existing) return { run: false, skipped: `volume group ${name} does not exist` };
      if (!existing.tags.includes(OWNER_TAG))
        return refuse(`volume group ${name} was not created by pulumi-lvm (no tag ${OWNER_TAG})`);
      return { run: true };
    }
    case "write-lvmd-config":
      return { run: true };
    default:
      return refuse(
        `unknown step ${JSON.stringify((action as { op: unknown }).op)}; this agent does not know how to check it`,
      );
  }
}

/** Records the effect of a completed step in the state. */
export function applyEffect(action: PlanAction, state: LvmState): void {
  const canon = (p: string) => state.aliases.get(p) ?? p;
  const vg = volumeGroupOf(action);
  const devices = devicesOf(action).map(canon);
  switch (action.op) {
    case "pvcreate":
      for (const d of devices) if (!state.pvs.has(d)) state.pvs.set(d, { vg: "", used: 0, tags: [] });
      break;
    case "vgcreate":
      if (vg) state.vgs.set(vg, { tags: [OWNER_TAG] });
      for (const d of devices) state.pvs.set(d, { tags: [], ...state.pvs.get(d), vg: vg ?? "", used: 0 });
      break;
    case "vgextend":
      for (const d of devices) state.pvs.set(d, { used: 0, tags: [], ...state.pvs.get(d), vg: vg ?? "" });
      break;
    case "pvchange": {
      const tag = optionValue(parseArgv(action.argv), "--addtag");
      const pv = devices[0] ? state.pvs.get(devices[0]) : undefined;
      if (pv && tag) state.pvs.set(devices[0]!, { ...pv, tags: [...pv.tags, tag] });
      break;
    }
    case "pvmove": {
      const source = devices[0] ? state.pvs.get(devices[0]) : undefined;
      if (source) state.pvs.set(devices[0]!, { ...source, used: 0 });
      break;
    }
    case "vgreduce":
      for (const d of devices) state.pvs.set(d, { tags: [], ...state.pvs.get(d), vg: "", used: 0 });
      break;
    case "vgreduce-removemissing":
      if (vg) state.missingPvs.delete(vg);
      for (const lv of action.lostVolumes ?? []) state.lvs.delete(lv);
      break;
    case "pvremove":
      for (const d of devices) state.pvs.delete(d);
      break;
    case "lvcreate-thinpool": {
      const key = logicalVolumeOf(action);
      if (key) state.lvs.set(key, "twi-a-tz--");
      break;
    }
    case "lvextend-thinpool": {
      // lvm 2.03.16 grows the metadata with the data, older versions do not: its size is unknown now.
      const key = logicalVolumeOf(action);
      if (key) state.thinMetadata.delete(key);
      break;
    }
    case "lvextend-thinpool-metadata": {
      const key = logicalVolumeOf(action);
      const target = byteCount(optionValue(parseArgv(action.argv), "--poolmetadatasize"));
      if (key && target !== undefined) state.thinMetadata.set(key, target);
      break;
    }
    case "lvchange-deactivate": {
      const key = logicalVolumeOf(action);
      const attr = key ? state.lvs.get(key) : undefined;
      if (key && attr) state.lvs.set(key, `${attr.slice(0, 4)}-${attr.slice(5)}`);
      break;
    }
    case "lvremove-thinpool": {
      const key = logicalVolumeOf(action);
      if (key) state.lvs.delete(key);
      if (key) state.thinMetadata.delete(key);
      break;
    }
    case "vgremove":
      if (!vg) break;
      state.vgs.delete(vg);
      for (const [d, pv] of state.pvs) if (pv.vg === vg) state.pvs.set(d, { ...pv, vg: "", used: 0 });
      for (const key of [...state.lvs.keys()]) if (key.startsWith(`${vg}/`)) state.lvs.delete(key);
      for (const key of [...state.thinMetadata.keys()])
        if (key.startsWith(`${vg}/`)) state.thinMetadata.delete(key);
      break;
    case "wipefs":
    case "lvmdevices-adddev":
    case "lvmdevices-deldev":
    case "write-lvmd-config":
      break;
  }
}

/** Every device an action writes to: its `device`, its `devices` and every `/dev/...` word of its argv. */
export function devicesOf(action: PlanAction): string[] {
  const out = new Set<string>();
  if (action.device) out.add(action.device);
  for (const d of action.devices ?? []) out.add(d);
  for (const word of action.argv.slice(1)) if (word.startsWith("/dev/")) out.add(word);
  return [...out];
}

/**
 * `vgreduce --removemissing [--force] VG` runs only on a group of ours, removing exactly the missing
 * physical volumes the plan named and, with --force, no logical volume it did not name: a disk that
 * went missing since the plan was made, or a volume that lost data since, is never removed unseen.
 * Done (skipped) once the group misses nothing: repeating it after a crash is safe.
 */
function decideRemoveMissing(
  action: PlanAction,
  vg: string,
  state: LvmState,
  refuse: (reason: string) => never,
): Decision {
  const group = state.vgs.get(vg) ?? refuse(`volume group ${vg} does not exist`);
  if (!group.tags.includes(OWNER_TAG))
    return refuse(`volume group ${vg} was not created by pulumi-lvm (no tag ${OWNER_TAG})`);
  const missing = state.missingPvs.get(vg) ?? [];
  if (missing.length === 0) return { run: false, skipped: `volume group ${vg} misses no physical volume` };
  const named = new Set(action.missingPvs ?? []);
  const unseen = missing.filter((pv) => !named.has(pv));
  if (unseen.length)
    return refuse(`${unseen.join(", ")} of ${vg} went missing after the plan was made; review a fresh plan`);
  const force = action.argv.includes("--force");
  const lost = new Set(action.lostVolumes ?? []);
  const partial = [...state.lvs]
    .filter(([key, attr]) => key.startsWith(`${vg}/`) && attr[8] === "p")
    .map(([key]) => key);
  if (!force && partial.length)
    return refuse(
      `${partial.join(", ")} ${partial.length === 1 ? "has" : "have"} data on the missing physical volumes`,
    );
  if (force && lost.size === 0) return refuse("--force without the logical volumes it removes (lostVolumes)");
  if (force) {
    // Hidden sub-volumes (a pool's _tdata) are lost with the pool the plan names.
    const unnamed = partial.filter(
      (key) =>
        !lost.has(key) && !lost.has(thinPoolOf(key)) && !lost.has(`${vg}/[${key.slice(vg.length + 1)}]`),
    );
    if (unnamed.length)
      return refuse(`${unnamed.join(", ")} lost data since the plan was made; review a fresh plan`);
  }
  return { run: true };
}

/* ------------------------------------------------------------------------------ helpers ---- */

/** "8388608b" → 8388608; anything else (other units, no value) → undefined. */
function byteCount(value: string | undefined): number | undefined {
  const m = value === undefined ? null : /^(\d+)b$/.exec(value);
  return m ? Number(m[1]) : undefined;
}

function volumeGroupOf(action: PlanAction): string | undefined {
  if (action.volumeGroup) return action.volumeGroup;
  const first = parseArgv(action.argv).positionals.find((p) => !p.startsWith("/dev/"));
  return first?.split("/")[0];
}

/** "vg/lv" of a thin pool step: from --thinpool / -n / --name, else a "vg/lv" positional. */
function logicalVolumeOf(action: PlanAction): string | undefined {
  const parsed = parseArgv(action.argv);
  const slash = parsed.positionals.find((p) => !p.startsWith("/dev/") && p.includes("/"));
  const named = optionValue(parsed, "--thinpool", "-n", "--name");
  if (named?.includes("/")) return named;
  const vg = volumeGroupOf(action);
  if (named && vg) return `${vg}/${named}`;
  if (slash) return slash;
  return undefined;
}
