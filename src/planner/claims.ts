import type { LVMNodeSpec, VolumeGroup } from "../api";
import { discoveryPolicyOf, isWildcardSelector } from "../api";
import type { BlockDevice } from "../inventory/types";
import type { WipeSignature } from "./types";
import {
  matchDeviceSelector,
  resolveDeviceName,
  type CompiledRequirements,
  type SelectorMatch,
} from "./device-selector";
import { eligibility } from "./filters";
import { displayName, joinNames, sortNatural, type NodeIndex } from "./node-index";
import type { Member, Ownership, SpecVolumeGroupState } from "./ownership";

/** A device joining a volume group in this plan. */
export interface Joining {
  readonly device: BlockDevice;
  /** Signature types erased first (forceWipeDevicesAndDestroyAllData). */
  readonly wipe: readonly string[];
  /** Their identities (type, UUID, label, offset). */
  readonly wipeSignatures?: readonly WipeSignature[];
  /** An orphan PV the agent created itself: joins without pvcreate. */
  readonly adopted: boolean;
}

export interface Exclusion {
  readonly kname: string;
  readonly path?: string;
  readonly reasons: string[];
}

/** What one volume group of the spec gets on the node. */
export interface VolumeGroupClaims {
  readonly vg: VolumeGroup;
  readonly wildcard: boolean;
  readonly state: SpecVolumeGroupState;
  /** Members the selector still selects. */
  readonly staying: readonly Member[];
  /** Members the selector no longer selects. */
  readonly leaving: readonly Member[];
  readonly joining: readonly Joining[];
  /** Selected devices (and selector values naming no device) that are not used, in kname order. */
  readonly excluded: readonly Exclusion[];
}

/**
 * Decides which volume group each device belongs to (docs/device-selection.md):
 * - a member of one of our groups stays a member while its group selects it; when it does not, it
 *   leaves that group, and no other group may take it in the same plan;
 * - a device selected by exactly one non-wildcard group joins it if it is eligible (filters.ts);
 * - a device selected by two or more non-wildcard groups joins none and is reported in each;
 * - a wildcard (`Any`) group only takes devices no other group selects;
 * - an In value naming no device is reported as not found, with the alternatives its expression
 *   listed that the group did use ("<dev> was found and used instead").
 * Groups that cannot change now (a foreign group with the name, missing PVs) take no new devices.
 */
export function resolveClaims(
  spec: Pick<LVMNodeSpec, "volumeGroups">,
  index: NodeIndex,
  ownership: Ownership,
  ids: ReadonlyMap<string, string>,
  adoptOrphanPvs: ReadonlySet<string> = new Set(),
  compiled: CompiledRequirements = new Map(),
): VolumeGroupClaims[] {
  const groups = spec.volumeGroups.map((vg) => ({
    vg,
    wildcard: isWildcardSelector(vg.deviceSelector),
    state: ownership.vgState(vg.name),
    match: matchDeviceSelector(vg.deviceSelector, index, ownership.recordedNames, compiled),
    staying: [] as Member[],
    leaving: [] as Member[],
    joining: [] as Joining[],
    excluded: new Map<string, Exclusion>(),
  }));
  type Group = (typeof groups)[number];
  const exclude = (g: Group, d: BlockDevice, reasons: readonly string[]) => {
    let e = g.excluded.get(d.kname);
    if (!e)
      g.excluded.set(
        d.kname,
        (e =
          d.path && d.path !== d.kname
            ? { kname: d.kname, path: d.path, reasons: [] }
            : { kname: d.kname, reasons: [] }),
      );
    for (const r of reasons) if (!e.reasons.includes(r)) e.reasons.push(r);
  };
  const adopts = (d: BlockDevice) => {
    if (adoptOrphanPvs.size === 0 || ownership.pvOwner(d.kname)?.kind !== "orphan") return false;
    const uuid = index.pvByKname.get(d.kname)?.uuid;
    return (
      adoptOrphanPvs.has(ids.get(d.kname) ?? "") || (uuid !== undefined && adoptOrphanPvs.has(`pv:${uuid}`))
    );
  };
  const check = (g: Group, d: BlockDevice) => eligibility(d, g.vg, index, ownership, adopts(d));
  const named = new Map<Group, ReadonlySet<string>>();
  const namedOf = (g: Group) => {
    let set = named.get(g);
    if (!set) named.set(g, (set = namedBy(g.vg, index, ownership)));
    return set;
  };

  // Per device: the groups selecting it, those with a fixed selector and the wildcard ones (reused).
  const selecting: Group[] = [];
  const fixed: Group[] = [];
  const wild: Group[] = [];
  for (const d of index.devices) {
    if (selecting.length) selecting.length = fixed.length = wild.length = 0;
    for (const g of groups)
      if (g.match.matched.has(d.kname)) {
        selecting.push(g);
        (g.wildcard ? wild : fixed).push(g);
      }
    const owner = ownership.pvOwner(d.kname);
    if (owner?.kind !== "member" && selecting.length === 0) continue;
    // A logical volume of one of our groups (a thin pool, a pod's volume) is what plans build, not a
    // device to choose: a selector matching it by size or type leaves it out silently, so it never
    // fills the excluded lists, and its mounts never change the plan's hash. Named explicitly, it is
    // excluded with the reason, as any logical volume. A logical volume that is itself a physical
    // volume (nested LVM, lvm's scan_lvs=1) keeps its physical-volume treatment: a member stays in its
    // group's view (staying or leaving), any other PV is excluded with its reasons.
    if (
      d.type === "lvm" &&
      owner === undefined &&
      ownLogicalVolume(d, index, ownership) &&
      !selecting.some((g) => namedOf(g).has(d.kname))
    )
      continue;
    const n = displayName(d);
    if (owner?.kind === "member") {
      const home = groupNamed(groups, owner.vg);
      const member = memberOn((home.state as { members: readonly Member[] }).members, d);
      const stays = selecting.includes(home);
      (stays ? home.staying : home.leaving).push(member);
      for (const g of selecting) {
        if (g === home) continue;
        if (!stays)
          exclude(g, d, [
            `${n} is still a physical volume of ${home.vg.name}, which no longer selects it; ${g.vg.name} can take it once it has left ${home.vg.name}`,
          ]);
        else if (g.wildcard) exclude(g, d, [wildcardReason(n, [home.vg.name], true)]);
        else
          exclude(g, d, [
            `${n} is selected by both ${g.vg.name} and ${home.vg.name}; it stays in ${home.vg.name}, of which it is already a physical volume`,
          ]);
      }
      continue;
    }
    const contenders = fixed.length ? fixed : wild;
    if (contenders.length >= 2) {
      const names = contenders.map((g) => g.vg.name);
      for (const g of contenders) exclude(g, d, [conflictReason(n, names), ...check(g, d).reasons]);
    } else {
      const g = contenders[0]!;
      const e = check(g, d);
      if (e.reasons.length) exclude(g, d, e.reasons);
      else
        g.joining.push({
          device: d,
          wipe: e.wipe,
          ...(e.wipeSignatures ? { wipeSignatures: e.wipeSignatures } : {}),
          adopted: adopts(d),
        });
    }
    if (fixed.length && wild.length) {
      const used = fixed.length === 1 && fixed[0]!.joining.some((j) => j.device === d);
      const reason = wildcardReason(
        n,
        fixed.map((f) => f.vg.name),
        used,
      );
      for (const g of wild) exclude(g, d, [reason]);
    }
  }

  return groups.map((g) => {
    const frozen = frozenReason(g.vg.name, g.state) ?? staticReason(g.vg, g.state);
    const joining = frozen ? [] : g.joining;
    if (frozen) for (const j of g.joining) exclude(g, j.device, [`${displayName(j.device)} ${frozen}`]);
    const devices = g.excluded.size ? sortNatural([...g.excluded.values()], (e) => e.kname) : [];
    const excluded = g.match.notFound.length
      ? [...devices, ...notFoundExclusions(g.match, usedBy(g.staying, joining), index)]
      : devices;
    return {
      vg: g.vg,
      wildcard: g.wildcard,
      state: g.state,
      staying: g.staying,
      leaving: g.leaving,
      joining,
      excluded,
    };
  });
}

/**
 * Whether an lvm device is a logical volume of one of our volume groups that the spec names: the
 * device it is stacked on, followed down through the other logical volumes (a thin volume, its
 * pool, the pool's data) to the first physical volume, is a physical volume of such a group. The
 * first one: with nested LVM that physical volume may itself be a logical volume of another group,
 * and a logical volume belongs to the group it sits on directly.
 */
function ownLogicalVolume(d: BlockDevice, index: NodeIndex, ownership: Ownership): boolean {
  const seen = new Set<string>();
  for (let cur: BlockDevice | undefined = d; cur && !seen.has(cur.kname);) {
    seen.add(cur.kname);
    const below: BlockDevice | undefined = cur.parent ? index.byKname.get(cur.parent) : undefined;
    if (!below) return false;
    const owner = ownership.pvOwner(below.kname);
    if (owner !== undefined || below.type !== "lvm") return owner?.kind === "member";
    cur = below;
  }
  return false;
}

/** The devices a group's selector names by kname, path or symlink (the values of its In expressions). */
function namedBy(vg: VolumeGroup, index: NodeIndex, ownership: Ownership): ReadonlySet<string> {
  const named = new Set<string>();
  for (const term of vg.deviceSelector.deviceSelectorTerms)
    for (const r of term.matchExpressions)
      if (r.operator === "In" && (r.key === "kname" || r.key === "path" || r.key === "symlink"))
        for (const value of r.values ?? [])
          for (const device of resolveDeviceName(value, index, ownership.recordedNames))
            named.add(device.kname);
  return named;
}

function groupNamed<G extends { readonly vg: VolumeGroup }>(groups: readonly G[], name: string): G {
  for (const g of groups) if (g.vg.name === name) return g;
  throw new Error(`no volume group ${name} in the spec`);
}

function memberOn(members: readonly Member[], d: BlockDevice): Member {
  for (const m of members) if (m.device.kname === d.kname) return m;
  throw new Error(`${d.kname} is not a member`);
}

/** Knames of a group's devices once the plan has run. */
function usedBy(staying: readonly Member[], joining: readonly Joining[]): ReadonlySet<string> {
  return new Set([...staying.map((m) => m.device.kname), ...joining.map((j) => j.device.kname)]);
}

function conflictReason(n: string, groups: readonly string[]): string {
  return groups.length === 2
    ? `${n} is selected by both ${groups[0]} and ${groups[1]}, so neither uses it`
    : `${n} is selected by ${joinNames(groups)}, so none of them uses it`;
}

function wildcardReason(n: string, groups: readonly string[], used: boolean): string {
  return used
    ? `${n} is already being used by ${joinNames(groups)} and cannot be used by a wildcard (Any) volumeGroup`
    : `${n} is selected by ${joinNames(groups)} and cannot be used by a wildcard (Any) volumeGroup`;
}

/** Why a group takes no new devices in this plan (the rest of a sentence after the device), if it does not. */
function frozenReason(vg: string, state: SpecVolumeGroupState): string | undefined {
  if (state.kind === "foreign")
    return `is not used: a volume group named ${vg} exists on this node and pulumi-lvm does not own it`;
  if (state.kind === "owned" && state.missing.length)
    return `is not added while volume group ${vg} is missing ${state.missing.length === 1 ? "physical volume" : "physical volumes"} ${joinNames(state.missing.map((pv) => pv.uuid))}`;
  return undefined;
}

/**
 * deviceDiscoveryPolicy Static: once the group exists and is ours, the devices it was built with
 * are its physical volumes (as the node's inventory reports them); any other device is one that
 * appeared since, and is not added.
 */
function staticReason(vg: VolumeGroup, state: SpecVolumeGroupState): string | undefined {
  if (discoveryPolicyOf(vg) !== "Static" || state.kind !== "owned") return undefined;
  return "appeared after the group was built; discovery is Static";
}

function notFoundExclusions(match: SelectorMatch, used: ReadonlySet<string>, index: NodeIndex): Exclusion[] {
  return match.notFound.map(({ value, alternatives }) => ({
    kname: value,
    reasons: [
      ...alternatives
        .filter((k) => used.has(k))
        .map((k) => `${displayName(index.byKname.get(k)!)} was found and used instead`),
      `${value} was not found`,
    ],
  }));
}
