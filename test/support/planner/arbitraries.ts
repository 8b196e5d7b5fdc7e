import fc from "fast-check";
import type { DeviceClass, LVMNodeSpec, VolumeGroup } from "../../../src/api";
import type {
  BlockDevice,
  LogicalVolume,
  NodeInventory,
  PhysicalVolume,
  VolumeGroupInfo,
} from "../../../src/inventory/types";
import type { DeviceRequirement } from "../../../src/planner/device-selector";
import { estimatedPvExtents } from "../../../src/planner/volume-group";
import { asMember, disk, GiB, MiB, partition, signature, thinPoolLv, volumeGroup } from "./testing";

/**
 * fast-check arbitraries for planner properties: a node of up to six disks of every kind the planner
 * tells apart (blank, filesystem, mounted, read-only, small, partitioned, members of two of our groups
 * and of a foreign one, orphan PVs, unprobed), and a spec of one to three volume groups over them.
 */
export const NAMES = ["sdb", "sdc", "sdd", "sde", "sdf", "sdg"] as const;
type Kind =
  | "blank"
  | "xfs"
  | "mounted"
  | "readonly"
  | "small"
  | "partitioned"
  | "vg1"
  | "vg2"
  | "foreign"
  | "orphan"
  | "unprobed";
const KINDS: Kind[] = [
  "blank",
  "blank",
  "blank",
  "xfs",
  "mounted",
  "readonly",
  "small",
  "partitioned",
  "vg1",
  "vg1",
  "vg2",
  "foreign",
  "orphan",
  "unprobed",
];

const diskArb = fc.record({
  kind: fc.constantFrom(...KINDS),
  size: fc.constantFrom(20 * GiB, 50 * GiB, 100 * GiB),
  usedPercent: fc.constantFrom(0, 0, 30, 80),
  serial: fc.option(fc.constantFrom("S1", "S2", "S3"), { nil: undefined }),
  joinedAsItself: fc.boolean(),
});

const selectorArb: fc.Arbitrary<DeviceRequirement[]> = fc.oneof(
  fc
    .subarray([...NAMES, "sdz"], { minLength: 1 })
    .map((values): DeviceRequirement[] => [{ key: "kname", operator: "In", values }]),
  fc.constant<DeviceRequirement[]>([{ key: "kname", operator: "Any" }]),
  fc.constant<DeviceRequirement[]>([
    { key: "kname", operator: "Any" },
    { key: "size", operator: "GreaterThan", values: ["30Gi"] },
  ]),
  fc.constant<DeviceRequirement[]>([{ key: "serial", operator: "In", values: ["S1", "S2"] }]),
);

export const specArb = fc
  .record({
    groups: fc.array(fc.record({ selector: selectorArb, wipe: fc.boolean() }), {
      minLength: 1,
      maxLength: 3,
    }),
    pool: fc.constantFrom<number | "thick" | undefined>(50, 90, 100, "thick", undefined),
  })
  .map(({ groups, pool }): LVMNodeSpec => {
    const volumeGroups: VolumeGroup[] = groups.map((g, i) => ({
      name: `vg${i + 1}`,
      deviceSelector: {
        deviceSelectorTerms: [
          {
            matchExpressions: g.selector.map((r) => ({
              ...r,
              ...(r.values ? { values: [...r.values] } : {}),
            })),
          },
        ],
      },
      ...(g.wipe ? { forceWipeDevicesAndDestroyAllData: true } : {}),
    }));
    const deviceClasses: DeviceClass[] =
      pool === undefined
        ? []
        : pool === "thick"
          ? [{ name: "fast", strategy: "Thick", volumeGroup: "vg1" }]
          : [
              {
                name: "thin",
                strategy: "Thin",
                volumeGroup: "vg1",
                default: true,
                thin: { poolName: "pool0", sizePercent: pool, overprovisionRatio: 5 },
              },
            ];
    return { volumeGroups, deviceClasses };
  });

export const nodeArb = fc
  .record({ disks: fc.array(diskArb, { minLength: 1, maxLength: NAMES.length }), withPool: fc.boolean() })
  .map(({ disks, withPool }) => buildNode(disks, withPool));

type DiskSpec = typeof diskArb extends fc.Arbitrary<infer T> ? T : never;

export function buildNode(disks: readonly DiskSpec[], withPool: boolean): NodeInventory {
  const devices: BlockDevice[] = [];
  const members: Record<
    "vg1" | "vg2" | "foreign",
    { device: BlockDevice; used: number; joinedAs: string | null }[]
  > = { vg1: [], vg2: [], foreign: [] };
  const orphans: PhysicalVolume[] = [];
  disks.forEach((d, i) => {
    const name = NAMES[i]!;
    const base = disk(name, {
      size: d.kind === "small" ? 512 * MiB : d.size,
      ...(d.serial ? { serial: `${d.serial}-${name}` } : {}),
      symlinks: [`/dev/disk/by-id/ata-${name.toUpperCase()}`],
    });
    switch (d.kind) {
      case "blank":
      case "small":
        devices.push(base);
        break;
      case "xfs":
        devices.push({ ...base, signatures: [signature("xfs")] });
        break;
      case "mounted":
        devices.push({ ...base, signatures: [signature("ext4")], mountpoints: ["/var/lib/data"] });
        break;
      case "readonly":
        devices.push({ ...base, readOnly: true });
        break;
      case "unprobed":
        devices.push({ ...base, probed: false });
        break;
      case "partitioned":
        devices.push(
          { ...base, signatures: [signature("gpt")] },
          partition(name, 1, { size: 5 * GiB }),
          partition(name, 2, { size: d.size - 6 * GiB }),
        );
        break;
      case "orphan":
        devices.push(asMember(base));
        orphans.push({
          device: base.path,
          uuid: `orphan-${name}`,
          vgName: "",
          size: base.size,
          free: base.size,
          tags: [],
        });
        break;
      default: {
        const used = Math.floor(((d.size / (4 * MiB)) * d.usedPercent) / 100);
        devices.push(asMember(base));
        members[d.kind].push({
          device: base,
          used: d.kind === "vg1" && withPool ? used : 0,
          joinedAs: d.joinedAsItself ? base.kname : null,
        });
      }
    }
  });
  const pvs: PhysicalVolume[] = [...orphans];
  const vgs: VolumeGroupInfo[] = [];
  const lvs: LogicalVolume[] = [];
  for (const [name, list] of Object.entries(members)) {
    if (!list.length) continue;
    const g = volumeGroup(name === "foreign" ? "legacy" : name, list, name === "foreign" ? { tags: [] } : {});
    pvs.push(...g.pvs);
    vgs.push(g.vg);
    const used = list.reduce((s, m) => s + m.used, 0);
    if (name === "vg1" && withPool && used > 0) lvs.push(thinPoolLv("vg1", "pool0", used));
  }
  const children = new Map<string, string[]>();
  for (const d of devices) if (d.parent) children.set(d.parent, [...(children.get(d.parent) ?? []), d.kname]);
  return {
    node: "prop",
    labels: {},
    devices: devices.map((d) => ({ ...d, children: children.get(d.kname) ?? [] })),
    pvs,
    vgs,
    lvs,
  };
}

/** Who the nested physical volume belongs to: our vg2 (or vg3), the foreign legacy, or no group. */
const NESTED_OWNERS = ["vg2", "vg3", "legacy", "orphan"] as const;

/**
 * A node as nodeArb makes them whose first disk is a member of vg1, with nested LVM (lvm's
 * scan_lvs=1): a logical volume of vg1 on that disk (/dev/mapper/vg1-nested) that is itself a
 * physical volume of another group, ours or foreign, or of none.
 */
export const nestedNodeArb = fc
  .record({
    first: diskArb.map((d) => ({ ...d, kind: "vg1" as const })),
    rest: fc.array(diskArb, { maxLength: NAMES.length - 1 }),
    withPool: fc.boolean(),
    owner: fc.constantFrom(...NESTED_OWNERS),
    size: fc.constantFrom(2 * GiB, 10 * GiB),
  })
  .map(({ first, rest, withPool, owner, size }) =>
    withNestedPv(buildNode([first, ...rest], withPool), owner, size),
  );

function withNestedPv(
  inv: NodeInventory,
  owner: (typeof NESTED_OWNERS)[number],
  size: number,
): NodeInventory {
  const on = `/dev/${NAMES[0]}`;
  const nested = asMember(
    disk("dm-0", {
      type: "lvm",
      path: "/dev/mapper/vg1-nested",
      symlinks: ["/dev/mapper/vg1-nested"],
      parent: on,
      size,
    }),
  );
  const X = inv.vgs.find((v) => v.name === "vg1")!.extentSize;
  const extents = estimatedPvExtents(size, X);
  const vgName = owner === "orphan" ? "" : owner;
  const pv: PhysicalVolume = {
    device: nested.path,
    uuid: `nested-${owner}`,
    vgName,
    size: extents * X,
    free: extents * X,
    tags: [],
  };
  const existing = inv.vgs.find((v) => v.name === vgName);
  const grown = (vg: VolumeGroupInfo): VolumeGroupInfo => ({
    ...vg,
    size: vg.size + pv.size,
    free: vg.free + pv.free,
    extentCount: vg.extentCount + extents,
    freeExtentCount: vg.freeExtentCount + extents,
  });
  const vgs =
    vgName === ""
      ? inv.vgs
      : existing
        ? inv.vgs.map((v) => (v === existing ? grown(v) : v))
        : [...inv.vgs, volumeGroup(vgName, [{ device: nested }], vgName === "legacy" ? { tags: [] } : {}).vg];
  return {
    ...inv,
    devices: [
      ...inv.devices.map((d) => (d.kname === on ? { ...d, children: [...d.children, nested.kname] } : d)),
      nested,
    ],
    pvs: [...inv.pvs, pv],
    vgs,
    lvs: [
      ...inv.lvs,
      { name: "nested", vgName: "vg1", uuid: "vg1-nested", size, attr: "-wi-a-----", tags: [] },
    ],
  };
}
