import type { LVMNodeSpec, VolumeGroup } from "../../../src/api";
import type {
  BlockDevice,
  LogicalVolume,
  NodeInventory,
  PhysicalVolume,
  Signature,
  VolumeGroupInfo,
} from "../../../src/inventory/types";
import { OWNER_TAG } from "../../../src/inventory/types";
import { KNAME_TAG_PREFIX } from "../../../src/planner/ownership";
import { DEFAULT_EXTENT_SIZE, estimatedPvExtents } from "../../../src/planner/volume-group";

/**
 * Builders for planner tests: NodeInventory objects as the inventory parsers would produce them,
 * with the device tree (children/parent) filled in from `parent` alone.
 */

export const MiB = 1024 ** 2;
export const GiB = 1024 ** 3;

type DeviceOptions = Partial<Omit<BlockDevice, "kname">>;

/** A blank, probed, writable whole disk: "sdb" → /dev/sdb, 100Gi unless given. */
export function disk(name: string, o: DeviceOptions = {}): BlockDevice {
  const kname = name.startsWith("/") ? name : `/dev/${name}`;
  return {
    kname,
    path: kname,
    type: "disk",
    size: 100 * GiB,
    symlinks: [],
    readOnly: false,
    removable: false,
    rotational: false,
    mountpoints: [],
    children: [],
    suspended: false,
    signatures: [],
    probed: true,
    ...o,
  };
}

/** Partition `n` of a disk: "sda", 1 → /dev/sda1 (nvme0n1 → nvme0n1p1). */
export function partition(parent: string, n: number, o: DeviceOptions = {}): BlockDevice {
  const base = parent.replace(/^\/dev\//, "");
  return disk(`${base}${/\d$/.test(base) ? "p" : ""}${n}`, {
    type: "part",
    size: 10 * GiB,
    parent: `/dev/${base}`,
    ...o,
  });
}

/** A device-mapper device: /dev/dm-N named /dev/mapper/<name>, on top of `parent`. */
export function mapper(n: number, name: string, o: DeviceOptions = {}): BlockDevice {
  return disk(`dm-${n}`, {
    type: "crypt",
    path: `/dev/mapper/${name}`,
    symlinks: [`/dev/mapper/${name}`],
    ...o,
  });
}

export function signature(type: string, o: Partial<Signature> = {}): Signature {
  return { type, offset: "0x0", usage: type === "LVM2_member" ? "raid" : "filesystem", ...o };
}

export interface InventoryOptions {
  readonly node?: string;
  readonly labels?: Record<string, string>;
  readonly pvs?: readonly PhysicalVolume[];
  readonly vgs?: readonly VolumeGroupInfo[];
  readonly lvs?: readonly LogicalVolume[];
}

/** A node's inventory; every device's `children` is derived from the others' `parent`. */
export function inventory(devices: readonly BlockDevice[], o: InventoryOptions = {}): NodeInventory {
  const children = new Map<string, string[]>();
  for (const d of devices) if (d.parent) children.set(d.parent, [...(children.get(d.parent) ?? []), d.kname]);
  return {
    node: o.node ?? "node-1",
    labels: o.labels ?? {},
    devices: devices.map((d) => ({
      ...d,
      children: [...new Set([...d.children, ...(children.get(d.kname) ?? [])])],
    })),
    pvs: o.pvs ?? [],
    vgs: o.vgs ?? [],
    lvs: o.lvs ?? [],
  };
}

export interface GroupMember {
  readonly device: BlockDevice;
  /** Extents in use on it. @default 0 */
  readonly used?: number;
  /** The kernel name it joined under, recorded in its PV tag; null for none. @default its kname now */
  readonly joinedAs?: string | null;
}

/**
 * A volume group with its PVs as lvm reports them (extents per PV as pvcreate gives them), tagged
 * ours unless `tags` says otherwise, and LVs using `lvExtents` of it. Devices get the LVM2_member
 * signature through `asMember`.
 */
export function volumeGroup(
  name: string,
  members: readonly GroupMember[],
  o: { tags?: readonly string[]; extentSize?: number; lvExtents?: number } = {},
): { vg: VolumeGroupInfo; pvs: PhysicalVolume[] } {
  const X = o.extentSize ?? DEFAULT_EXTENT_SIZE;
  const pvs = members.map((m, i) => {
    const extents = estimatedPvExtents(m.device.size, X);
    const joinedAs = m.joinedAs === undefined ? m.device.kname : m.joinedAs;
    return {
      device: m.device.path,
      uuid: `${name}-pv-${i}`,
      vgName: name,
      size: extents * X,
      free: (extents - (m.used ?? 0)) * X,
      tags: joinedAs === null ? [] : [`${KNAME_TAG_PREFIX}${joinedAs.replace(/^\/dev\//, "")}`],
    };
  });
  const extentCount = pvs.reduce((sum, pv) => sum + pv.size / X, 0);
  const freeExtentCount = pvs.reduce((sum, pv) => sum + pv.free / X, 0);
  return {
    vg: {
      name,
      uuid: `${name}-uuid`,
      size: extentCount * X,
      free: freeExtentCount * X,
      extentSize: X,
      extentCount,
      freeExtentCount,
      tags: o.tags ?? [OWNER_TAG],
    },
    pvs,
  };
}

/** The device as an LVM physical volume shows on probing. */
export function asMember(device: BlockDevice): BlockDevice {
  return { ...device, signatures: [signature("LVM2_member", { offset: "0x218" })] };
}

/** A thin pool LV of `extents` data extents. */
export function thinPoolLv(
  vg: string,
  name: string,
  extents: number,
  extentSize = DEFAULT_EXTENT_SIZE,
): LogicalVolume {
  return {
    name,
    vgName: vg,
    uuid: `${vg}-${name}`,
    size: extents * extentSize,
    attr: "twi-a-tz--",
    tags: [OWNER_TAG],
  };
}

/** A volume group of the spec selecting devices by kname (In). */
export function knameGroup(
  name: string,
  knames: readonly string[],
  o: Partial<VolumeGroup> = {},
): VolumeGroup {
  return {
    name,
    deviceSelector: {
      deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values: [...knames] }] }],
    },
    ...o,
  };
}

/** A spec of volume groups, with a Thin device class on the first unless `deviceClasses` is given. */
export function nodeSpec(
  volumeGroups: readonly VolumeGroup[],
  deviceClasses?: LVMNodeSpec["deviceClasses"],
): LVMNodeSpec {
  return {
    volumeGroups: [...volumeGroups],
    deviceClasses: deviceClasses ?? [
      {
        name: "thin",
        strategy: "Thin",
        volumeGroup: volumeGroups[0]!.name,
        default: true,
        thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
      },
    ],
  };
}
