import type { BlockDevice, PhysicalVolume, VolumeGroupInfo } from "../inventory/types";
import { OWNER_TAG } from "../inventory/types";
import type { NodeIndex } from "./node-index";

/**
 * Which volume groups and physical volumes are ours. A volume group is ours when it carries the
 * OWNER_TAG; the planner only acts on ours that the spec names. Physical volumes belong to the group
 * lvm says they are in, wherever their kernel name went: membership comes from lvm metadata, not from
 * device names, so a rename after a reboot changes nothing.
 *
 * When a device joins a group, the plan tags its PV with the kernel name it was selected under
 * (`pulumi-lvm.kname=sdb`, see KNAME_TAG_PREFIX). Selector values that name that kernel name keep
 * meaning that member after a rename, instead of whatever disk took the name.
 */

/** Prefix of the PV tag recording the kernel name a device joined under: "pulumi-lvm.kname=sdb". */
export const KNAME_TAG_PREFIX = `${OWNER_TAG}.kname=`;

export interface Member {
  readonly device: BlockDevice;
  readonly pv: PhysicalVolume;
  /** The kernel name path the member joined under, from its PV tag ("/dev/sdb"), if recorded. */
  readonly recordedKname?: string;
}

/** The state of a volume group the spec names. */
export type SpecVolumeGroupState =
  | { readonly kind: "absent" }
  | {
      readonly kind: "owned";
      readonly info: VolumeGroupInfo;
      readonly members: readonly Member[];
      /** PVs lvm lists in the group whose device is not on the node. */
      readonly missing: readonly PhysicalVolume[];
    }
  /** A group of that name exists without our tag: it is not ours and is never touched. */
  | { readonly kind: "foreign"; readonly info: VolumeGroupInfo };

/** Who a physical volume belongs to. */
export type PvOwner =
  /** A PV of one of our volume groups that the spec names. */
  | { readonly kind: "member"; readonly vg: string }
  /** A PV of a group carrying our tag that this spec does not name: left alone. */
  | { readonly kind: "unmanaged"; readonly vg: string }
  /** A PV of a group without our tag. */
  | { readonly kind: "foreign"; readonly vg: string }
  /** A PV in no volume group. */
  | { readonly kind: "orphan" };

export interface Ownership {
  vgState(name: string): SpecVolumeGroupState;
  /** undefined when the device is not a physical volume. */
  pvOwner(kname: string): PvOwner | undefined;
  /** Present members by the kernel name path they joined under ("/dev/sdb" → the member's device). */
  readonly recordedNames: ReadonlyMap<string, readonly BlockDevice[]>;
}

export function ownershipOf(index: NodeIndex, specVolumeGroups: readonly string[]): Ownership {
  const inSpec = new Set(specVolumeGroups);
  const vgsByName = new Map(index.inventory.vgs.map((vg) => [vg.name, vg]));
  const ours = (vg: VolumeGroupInfo | undefined) => vg !== undefined && vg.tags.includes(OWNER_TAG);

  const members = new Map<string, Member[]>();
  const states = new Map<string, SpecVolumeGroupState>();
  for (const name of inSpec) {
    const info = vgsByName.get(name);
    if (!info) states.set(name, { kind: "absent" });
    else if (!ours(info)) states.set(name, { kind: "foreign", info });
    else {
      const list: Member[] = [];
      members.set(name, list);
      states.set(name, {
        kind: "owned",
        info,
        members: list,
        missing: index.missingPvs.filter((pv) => pv.vgName === name),
      });
    }
  }

  const owners = new Map<string, PvOwner>();
  const recorded = new Map<string, BlockDevice[]>();
  for (const [kname, pv] of index.pvByKname) {
    if (!pv.vgName) {
      owners.set(kname, ORPHAN);
      continue;
    }
    const vg = vgsByName.get(pv.vgName);
    if (!ours(vg)) {
      owners.set(kname, { kind: "foreign", vg: pv.vgName });
      continue;
    }
    if (!inSpec.has(pv.vgName)) {
      owners.set(kname, { kind: "unmanaged", vg: pv.vgName });
      continue;
    }
    owners.set(kname, { kind: "member", vg: pv.vgName });
    const device = index.byKname.get(kname)!;
    const recordedKname = recordedKnameOf(pv);
    members.get(pv.vgName)!.push(recordedKname ? { device, pv, recordedKname } : { device, pv });
    if (recordedKname) {
      const list = recorded.get(recordedKname) ?? [];
      list.push(device);
      recorded.set(recordedKname, list);
    }
  }

  return {
    vgState: (name) => states.get(name) ?? { kind: "absent" },
    pvOwner: (kname) => owners.get(kname),
    recordedNames: recorded,
  };
}

/** Every orphan PV's owner (one object for all). */
const ORPHAN: PvOwner = Object.freeze({ kind: "orphan" });

/** The kernel name path recorded in a PV's tags ("pulumi-lvm.kname=sdb" → "/dev/sdb"). */
export function recordedKnameOf(pv: PhysicalVolume): string | undefined {
  // The first such tag in sorted order: the least of them.
  let tag: string | undefined;
  for (const t of pv.tags) if (t.startsWith(KNAME_TAG_PREFIX) && (tag === undefined || t < tag)) tag = t;
  return tag ? `/dev/${tag.slice(KNAME_TAG_PREFIX.length)}` : undefined;
}

/** The tag recording a kernel name path ("/dev/sdb" → "pulumi-lvm.kname=sdb"). */
export function knameTag(kname: string): string {
  return KNAME_TAG_PREFIX + kname.replace(/^\/dev\//, "");
}
