import {
  OWNER_TAG,
  type BlockDevice,
  type LogicalVolume,
  type NodeInventory,
  type PhysicalVolume,
  type Signature,
  type VolumeGroupInfo,
} from "./types";

/**
 * Large, made-up but consistent inventories for the planner benchmark: every node has the same number of
 * devices with a deterministic mix of blank disks, PVs of an owned (tagged) VG with a thin pool, PVs of a
 * foreign VG, filesystems (some mounted), swap, small, read-only and removable disks, GPT disks with
 * partitions, and disks whose probe failed. Node `i` depends only on (seed, i), so any node can be built
 * on its own and the same options always give the same inventory.
 */
export interface SyntheticOptions {
  /** @default 1 */
  readonly seed?: number;
  /** Block devices per node, partitions included. @default 24 */
  readonly devicesPerNode?: number;
}

/** Node `index` of the synthetic fleet. */
export function syntheticNodeInventory(index: number, options: SyntheticOptions = {}): NodeInventory {
  const random = mulberry32(((options.seed ?? 1) * 0x9e3779b1) ^ Math.imul(index + 1, 0x85ebca6b));
  return new NodeBuilder(index, random).build(options.devicesPerNode ?? 24);
}

/** Nodes 0 .. count-1. */
export function syntheticNodeInventories(count: number, options: SyntheticOptions = {}): NodeInventory[] {
  const nodes = new Array<NodeInventory>(count);
  for (let i = 0; i < count; i++) nodes[i] = syntheticNodeInventory(i, options);
  return nodes;
}

const MiB = 1024 ** 2;
const EXTENT = 4 * MiB;
const DISK_SIZES = [480e9, 960e9, 1.92e12, 3.84e12, 7.68e12].map((b) => Math.floor(b / 4096) * 4096);
const ZONES = ["zone-a", "zone-b", "zone-c"];
const NONE: readonly never[] = Object.freeze([]);
const OWNED_VG = "vg-pulumi";
const FOREIGN_VG = "vg-legacy";

type Kind =
  | "blank"
  | "owned-pv"
  | "foreign-pv"
  | "ext4"
  | "swap"
  | "small"
  | "read-only"
  | "removable"
  | "gpt"
  | "unprobed";
/** Cumulative weights out of 100. */
const KINDS: readonly [Kind, number][] = [
  ["blank", 40],
  ["owned-pv", 55],
  ["foreign-pv", 63],
  ["ext4", 71],
  ["swap", 75],
  ["small", 80],
  ["read-only", 84],
  ["removable", 88],
  ["gpt", 96],
  ["unprobed", 100],
];

class NodeBuilder {
  private readonly devices: BlockDevice[] = [];
  private readonly members: { device: string; uuid: string; vgName: string; size: number }[] = [];
  private nvme = 0;
  private sd = 0;

  constructor(
    private readonly index: number,
    private readonly random: () => number,
  ) {}

  build(count: number): NodeInventory {
    while (this.devices.length < count) this.add(this.kind(count - this.devices.length));
    return {
      node: `synthetic-${this.index}`,
      labels: {
        "topology.kubernetes.io/zone": ZONES[this.index % ZONES.length]!,
        "node-role.kubernetes.io/storage": this.random() < 0.9 ? "true" : "false",
      },
      devices: this.devices,
      ...this.volumeGroups(),
    };
  }

  private kind(room: number): Kind {
    const r = this.random() * 100;
    const kind = KINDS.find(([, upTo]) => r < upTo)![0];
    return kind === "gpt" && room < 3 ? "blank" : kind;
  }

  private add(kind: Kind): void {
    const rotational = kind !== "removable" && this.random() < 0.3;
    const kname =
      rotational || kind === "removable"
        ? cached(SD, this.sd++, sdName)
        : cached(NVME, this.nvme++, nvmeName);
    const size = kind === "small" ? 512 * MiB : DISK_SIZES[Math.floor(this.random() * DISK_SIZES.length)]!;
    const serial = `SN${this.index.toString(36).toUpperCase()}X${this.devices.length}`;
    const wwn = `0x5000c500${(this.index * 64 + this.devices.length).toString(16).padStart(8, "0")}`;
    const disk: Mutable<BlockDevice> = {
      kname,
      path: kname,
      type: "disk",
      size,
      symlinks: [`/dev/disk/by-id/wwn-${wwn}`],
      serial,
      wwn,
      model: rotational ? "ST4000NM0035" : "SAMSUNG MZQL21T9",
      rotational,
      readOnly: kind === "read-only",
      removable: kind === "removable",
      fstype: undefined,
      mountpoints: NONE,
      children: NONE,
      suspended: false,
      signatures: NONE,
      probed: kind !== "unprobed",
      probeError:
        kind === "unprobed"
          ? `wipefs --json --no-act ${kname}: exit status 1: Device or resource busy`
          : undefined,
    };
    this.devices.push(disk);
    if (kind === "owned-pv" || kind === "foreign-pv")
      this.pv(disk, kind === "owned-pv" ? OWNED_VG : FOREIGN_VG);
    if (kind === "ext4") {
      disk.signatures = [signature("ext4", "0x438", "filesystem")];
      if (this.random() < 0.5) disk.mountpoints = [`/mnt/data${this.devices.length}`];
    }
    if (kind === "swap") {
      disk.signatures = [signature("swap", "0xff6", "other")];
      disk.mountpoints = ["[SWAP]"];
    }
    if (kind === "gpt") this.partitions(disk);
  }

  private pv(disk: Mutable<BlockDevice>, vgName: string): void {
    const uuid = fakeUuid(this.random);
    disk.signatures = [{ type: "LVM2_member", offset: "0x218", uuid, usage: "raid" }];
    disk.fstype = "LVM2_member";
    this.members.push({
      device: disk.kname,
      uuid,
      vgName,
      size: Math.floor((disk.size - MiB) / EXTENT) * EXTENT,
    });
  }

  private partitions(disk: Mutable<BlockDevice>): void {
    const esp = 512 * MiB;
    disk.signatures = [
      signature("PMBR", "0x1fe", "partition-table"),
      signature("gpt", "0x200", "partition-table"),
    ];
    const separator = disk.kname.startsWith("/dev/sd") ? "" : "p";
    const [p1, p2] = [1, 2].map((n) => `${disk.kname}${separator}${n}`) as [string, string];
    disk.children = [p1, p2];
    const part = (
      kname: string,
      size: number,
      partlabel: string,
      extra: Partial<BlockDevice>,
    ): BlockDevice => ({
      kname,
      path: kname,
      type: "part",
      size,
      symlinks: NONE,
      rotational: disk.rotational,
      readOnly: false,
      removable: false,
      partlabel,
      mountpoints: NONE,
      parent: disk.kname,
      children: NONE,
      suspended: false,
      signatures: NONE,
      probed: true,
      ...extra,
    });
    this.devices.push(
      part(p1, esp, "EFI System", {
        signatures: [signature("vfat", "0x52", "filesystem")],
        mountpoints: ["/boot/efi"],
      }),
      part(p2, disk.size - esp - 2 * MiB, "data", {}),
    );
  }

  /** VGs from the PVs made so far: the foreign one holds a linear LV, the owned one a thin pool at 90%. */
  private volumeGroups(): Pick<NodeInventory, "pvs" | "vgs" | "lvs"> {
    const pvs: PhysicalVolume[] = [];
    const vgs: VolumeGroupInfo[] = [];
    const lvs: LogicalVolume[] = [];
    for (const name of [FOREIGN_VG, OWNED_VG]) {
      const members = this.members.filter((p) => p.vgName === name);
      if (members.length === 0) continue;
      const tags = name === OWNED_VG ? [OWNER_TAG] : NONE;
      const extentCount = members.reduce((n, p) => n + p.size / EXTENT, 0);
      const used = name === OWNED_VG ? Math.floor(extentCount * 0.9) : Math.min(extentCount, 2560);
      let toPlace = used;
      for (const m of members) {
        const placed = Math.min(toPlace, m.size / EXTENT);
        toPlace -= placed;
        pvs.push({
          device: m.device,
          uuid: m.uuid,
          vgName: name,
          size: m.size,
          free: m.size - placed * EXTENT,
          tags,
        });
      }
      const freeExtentCount = extentCount - used;
      vgs.push({
        name,
        uuid: fakeUuid(this.random),
        size: extentCount * EXTENT,
        free: freeExtentCount * EXTENT,
        extentSize: EXTENT,
        extentCount,
        freeExtentCount,
        tags,
      });
      const lv = (
        lvName: string,
        vgName: string,
        extents: number,
        attr: string,
        extra: Partial<LogicalVolume> = {},
      ): LogicalVolume => ({
        name: lvName,
        vgName,
        uuid: fakeUuid(this.random),
        size: extents * EXTENT,
        attr,
        tags: NONE,
        ...extra,
      });
      if (name === FOREIGN_VG) {
        lvs.push(lv("home", name, used, "-wi-ao----"));
        continue;
      }
      const data = used - 2;
      const dataPercent = Math.round(this.random() * 9000) / 100;
      lvs.push(
        lv("thinpool", name, data, "twi-aotz--", { dataPercent, metadataPercent: 10.5 }),
        lv("thinpool_tdata", name, data, "Twi-ao----", { hidden: true }),
        lv("thinpool_tmeta", name, 1, "ewi-ao----", { hidden: true }),
        lv("lvol0_pmspare", name, 1, "ewi-------", { hidden: true }),
      );
    }
    return { pvs, vgs, lvs };
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

function signature(type: string, offset: string, usage: string): Signature {
  return { type, offset, usage };
}

/** Device names are the same on every node: built once, shared by all. */
const SD: string[] = [];
const NVME: string[] = [];

function cached(names: string[], n: number, make: (n: number) => string): string {
  return (names[n] ??= make(n));
}

function nvmeName(n: number): string {
  return `/dev/nvme${n}n1`;
}

/** 0 → "/dev/sda", 25 → "/dev/sdz", 26 → "/dev/sdaa". */
function sdName(n: number): string {
  return `/dev/sd${letters(n)}`;
}

function letters(n: number): string {
  return n < 26 ? String.fromCharCode(97 + n) : letters(Math.floor(n / 26) - 1) + letters(n % 26);
}

const UUID_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** An lvm-style uuid, "kxdqe8-GfrL-9Ico-e8Eo-yRzi-XhWE-XibUlL". */
function fakeUuid(random: () => number): string {
  let s = "";
  for (const len of [6, 4, 4, 4, 4, 4, 6]) {
    if (s) s += "-";
    for (let i = 0; i < len; i++) s += UUID_CHARS[Math.floor(random() * UUID_CHARS.length)];
  }
  return s;
}

/** Small, fast, seedable PRNG (public-domain mulberry32). */
function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
