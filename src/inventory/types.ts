import type { DevicesFile, RawDevicesFile } from "./devices-file";

/**
 * A node's disks and LVM state, as the planner sees them. Built from raw tool output by the parsers in
 * this folder (lsblk, sysfs, udev links, wipefs/blkid probes, lvm reports); never from lsblk's FSTYPE
 * alone, which is empty without udev even for a disk carrying an LVM2_member signature.
 * All sizes are bytes. Every device is named by its path (`/dev/sdb`, `/dev/mapper/x`, `/dev/dm-0`).
 */

/** A signature found by probing the device itself (`wipefs --json --no-act`, `blkid -p`). */
export interface Signature {
  /** e.g. "LVM2_member", "xfs", "ext4", "gpt", "dos", "swap", "crypto_LUKS" */
  readonly type: string;
  /** Byte offset as wipefs prints it, e.g. "0x218". */
  readonly offset?: string;
  readonly uuid?: string;
  readonly label?: string;
  /** wipefs/blkid usage: "filesystem", "raid", "partition-table" (with a hyphen), "crypto", "other". */
  readonly usage?: string;
}

export interface BlockDevice {
  /** Device path of the kernel name: "/dev/sdb", "/dev/dm-3", "/dev/loop7". */
  readonly kname: string;
  /** lsblk NAME as a path (for dm devices "/dev/mapper/<name>"); may equal kname. */
  readonly path: string;
  /** lsblk TYPE: disk, part, loop, lvm, crypt, dm, raid1, mpath, rom, ... */
  readonly type: string;
  readonly size: number;
  /** Every udev symlink known to point at this device: /dev/disk/by-id/..., by-path/..., /dev/mapper/... */
  readonly symlinks: readonly string[];
  readonly serial?: string;
  /** World wide name, lowercase, as "0x5000c500a1b2c3d4" or an NVMe eui/nguid string. */
  readonly wwn?: string;
  readonly model?: string;
  readonly vendor?: string;
  readonly rotational?: boolean;
  readonly readOnly: boolean;
  readonly removable: boolean;
  readonly partlabel?: string;
  readonly parttype?: string;
  /** lsblk FSTYPE; informational only, signatures decide. */
  readonly fstype?: string;
  readonly mountpoints: readonly string[];
  /** kname of the parent disk, for partitions; of the lower device, for dm/md stacked devices. */
  readonly parent?: string;
  /** knames of devices directly on top of this one (partitions, dm/md/crypt holders). */
  readonly children: readonly string[];
  /** dm state: true when a device-mapper device is suspended. */
  readonly suspended: boolean;
  /** For loop devices, the backing file. */
  readonly backingFile?: string;
  /** Signatures probed on the device. */
  readonly signatures: readonly Signature[];
  /**
   * True when wipefs ran on this device and succeeded, so `signatures` is the complete list. When false
   * or absent the signatures are unknown (an empty list then proves nothing): treat the device as in use.
   */
  readonly probed?: boolean;
  /** Why probing this device failed (the command and its error), when it did. */
  readonly probeError?: string;
}

export interface PhysicalVolume {
  /** Device path of the PV as lvm reports it (pv_name). */
  readonly device: string;
  readonly uuid: string;
  /** Empty string when the PV belongs to no VG. */
  readonly vgName: string;
  readonly size: number;
  readonly free: number;
  readonly tags: readonly string[];
  /**
   * lvm cannot find the PV's device (`pv_missing`, the "m" of pv_attr): `device` is then "[unknown]",
   * and only `uuid` names it.
   */
  readonly missing?: boolean;
}

export interface VolumeGroupInfo {
  readonly name: string;
  readonly uuid: string;
  readonly size: number;
  readonly free: number;
  readonly extentSize: number;
  readonly extentCount: number;
  readonly freeExtentCount: number;
  readonly tags: readonly string[];
}

export interface LogicalVolume {
  readonly name: string;
  readonly vgName: string;
  readonly uuid: string;
  readonly size: number;
  /** lv_attr, e.g. "twi-aotz--" (thin pool), "Vwi-a-tz--" (thin volume), "-wi-a-----" (linear). */
  readonly attr: string;
  /** For thin volumes, their pool. */
  readonly poolLv?: string;
  readonly dataPercent?: number;
  readonly metadataPercent?: number;
  /** For thin pools: the size of the metadata LV (`lv_metadata_size`, bytes). */
  readonly metadataSize?: number;
  /** For thin pools: the chunk size (`chunk_size` of the pool's segment, bytes). */
  readonly chunkSize?: number;
  readonly tags: readonly string[];
  /** An internal LV lvm shows in brackets (`[pool0_tdata]`, `[lvol0_pmspare]`); `name` is without them. */
  readonly hidden?: boolean;
}

export interface NodeInventory {
  readonly node: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly devices: readonly BlockDevice[];
  readonly pvs: readonly PhysicalVolume[];
  readonly vgs: readonly VolumeGroupInfo[];
  readonly lvs: readonly LogicalVolume[];
  /**
   * The mount of `/` when it comes from a device (a `/dev/...` source) that matches no device listed here
   * (btrfs's anonymous device number such as 0:33 with the source `/dev/root`, a by-uuid link that is
   * missing) and lsblk shows no device mounted at `/`. The root filesystem may then be on any disk, so
   * the planner uses none (docs/device-selection.md).
   */
  readonly unresolvedRootMount?: UnresolvedMount;
  /** Devices the inventory was restricted to that do not exist (RawNodeInventory.missingDevices), sorted. */
  readonly missingDevices?: readonly string[];
  /** lvm's devices file on this host (./devices-file.ts); absent when it was not read (older lvm, a recorded inventory). */
  readonly devicesFile?: DevicesFile;
}

/** A mount whose source could not be matched to a device: as mountinfo or /proc/mounts wrote it. */
export interface UnresolvedMount {
  readonly source: string;
  readonly fstype: string;
  /** "major:minor" (mountinfo only). */
  readonly majMin?: string;
}

/**
 * The raw, recorded form of a node's inventory: exactly what the tools printed. This is the format of
 * the `--inventory` file (`{"nodes": [RawNodeInventory, ...]}`) and of what the agent collects.
 */
export interface RawNodeInventory {
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  /** `lsblk --json --bytes --output-all` (with or without --paths). */
  readonly lsblk: unknown;
  /** `lvm fullreport --reportformat json --units b --nosuffix`, or `{pvs, vgs, lvs}` reports; null when lvm is absent. */
  readonly lvm: unknown | null;
  /** The entries of the "signatures" arrays printed by `wipefs --json --no-act` for the node's devices. */
  readonly signatures?: readonly unknown[];
  /**
   * Device paths wipefs ran on successfully. A blank device adds no entry to `signatures`, so only this list
   * tells "probed, nothing found" from "not probed"; a device missing here is reported with `probed: false`.
   */
  readonly probed?: readonly string[];
  /** Device path → why probing it failed (command and error). */
  readonly probeErrors?: Readonly<Record<string, string>>;
  /**
   * Devices discovery was restricted to (DiscoverOptions.devices) that do not exist: a detached loop
   * device, a removed device-mapper device, a pulled disk. The rest were discovered; a physical volume
   * that was on one shows up in lvm's report as missing.
   */
  readonly missingDevices?: readonly string[];
  /**
   * Device path → `blkid -p -o export <device>` output ("" when blkid found nothing). Gives partition
   * entry names and types (PART_ENTRY_NAME/TYPE) that lsblk leaves empty without udev.
   */
  readonly blkid?: Readonly<Record<string, string>>;
  /**
   * sysfs facts lsblk misses without udev: kname → { attribute → file content }, attributes relative to
   * /sys/class/block/<kname>/ ("ro", "serial", "device/wwid", "dm/suspended", ... see SYSFS_ATTRIBUTES),
   * plus "holders": the names in holders/ separated by spaces.
   */
  readonly sysfs?: Readonly<Record<string, Readonly<Record<string, string>>>>;
  /**
   * udev symlinks: link path → target kname path (readlink -f of the links under /dev/disk and /dev/mapper);
   * a relative target ("../../sdb") is taken relative to the link's directory.
   */
  readonly links?: Readonly<Record<string, string>>;
  /** /proc/self/mountinfo or /proc/mounts text, for mounts lsblk does not show. */
  readonly mounts?: string;
  /** /proc/swaps text. */
  readonly swaps?: string;
  /**
   * lvm's devices file: `lvm config` of its two settings and `lvm lvmdevices` (./devices-file.ts).
   * Absent when lvm has no devices file (before 2.03.12) or is not installed.
   */
  readonly devicesFile?: RawDevicesFile;
  /**
   * What the node's agent plans with besides the disks, recorded by `pulumi-lvm inventory
   * --agent-state-dir` beside a running agent, so that a plan made from this file is the one the agent
   * makes, with the same hash (src/planner/recorded-plan-options.ts reads it).
   */
  readonly agentPlanOptions?: RecordedPlanOptions;
}

/** PlanOptions as an agent would pass them, recorded (the lvmd.yaml as parsed, or null when there is none). */
export interface RecordedPlanOptions {
  readonly lvmdConfigPath: string;
  readonly currentLvmdConfig: unknown;
  readonly adoptOrphanPvs: readonly string[];
}

/** LVM tag that marks volume groups and PVs this project created. Ownership survives everything. */
export const OWNER_TAG = "pulumi-lvm";
