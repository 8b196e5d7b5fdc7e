import { posix } from "node:path";
import type { DiscoveryDeps, FileStamp } from "./discovery-deps";

/*
 * The discovery cache (issue 18, "re-discovery cut to what changed"): what discovery learnt about a
 * device, kept between discoveries in one agent process, and given again only while a key read fresh
 * from the kernel says the device cannot have changed.
 *
 * Two parts:
 *  - signatures: one device's wipefs entries and blkid output (the probes, ./probe.ts), keyed by
 *    signatureKey below: it changes whenever anything could have written to the device;
 *  - static sysfs: the attributes SYSFS_ATTRIBUTES marks static (serial, wwid, model, ...) and the VPD
 *    page, keyed by identityKey: it changes whenever the name stands for another device.
 *
 * The safety checks never read it: an apply or teardown discovers without it (src/agent/discovery.ts:
 * every device probed and read afresh, exactly as with no cache), and the identity re-check before
 * each write (src/agent/device-identity.ts) reads lsblk, sysfs and the PV label itself.
 */

/** A successful probe of one device: wipefs's entries and blkid's output ("" when it found nothing). */
export interface CachedProbe {
  readonly entries: readonly unknown[];
  readonly blkid: string;
}

/** Which part of the cache a lookup asked. */
export type DiscoveryCacheKind = "signatures" | "sysfs";

/** A device's signature key and the whole disk it is on (itself, for a whole device). */
export interface SignatureKey {
  readonly key: string;
  readonly disk: string;
}

export interface DiscoveryCacheOptions {
  /**
   * An entry older than this is not used, whatever its key: a bound on how long a change that no
   * counter of this kernel sees can stay hidden (another machine writing a shared disk, below).
   * @default 300000 (5 minutes)
   */
  readonly maxAgeMs?: number;
  /** Told of every lookup: a hit, or a miss (no entry, another key, too old, or no key at all). */
  readonly observe?: (kind: DiscoveryCacheKind, result: "hit" | "miss") => void;
  /** @default Date.now */
  readonly now?: () => number;
  /** Test-only: another signature key (to show what a weaker key would hide). @default signatureKey */
  readonly signatureKey?: (
    deps: DiscoveryDeps,
    name: string,
    partition: boolean,
  ) => Promise<SignatureKey | undefined>;
}

export const DEFAULT_DISCOVERY_CACHE_MAX_AGE_MS = 300_000;

/** Entries by kernel name (basename: "loop3", "sda1"). */
export class DiscoveryCache {
  private readonly probes = new Map<string, { key: string; disk: string; at: number; probe: CachedProbe }>();
  private readonly statics = new Map<string, { key: string; at: number; attrs: Record<string, string> }>();
  private readonly maxAgeMs: number;
  private readonly now: () => number;
  readonly signatureKey: (
    deps: DiscoveryDeps,
    name: string,
    partition: boolean,
  ) => Promise<SignatureKey | undefined>;

  constructor(private readonly options: DiscoveryCacheOptions = {}) {
    this.maxAgeMs = options.maxAgeMs ?? DEFAULT_DISCOVERY_CACHE_MAX_AGE_MS;
    this.now = options.now ?? Date.now;
    this.signatureKey = options.signatureKey ?? signatureKey;
  }

  /** The probe stored for `name` under `key` (undefined: no key), or undefined; counted. */
  probe(name: string, key: string | undefined): CachedProbe | undefined {
    const e = this.probes.get(name);
    const hit = key !== undefined && e !== undefined && e.key === key && this.now() - e.at <= this.maxAgeMs;
    this.options.observe?.("signatures", hit ? "hit" : "miss");
    return hit ? e.probe : undefined;
  }

  storeProbe(name: string, key: SignatureKey, probe: CachedProbe): void {
    this.probes.set(name, { key: key.key, disk: key.disk, at: this.now(), probe });
  }

  /** The static attributes stored for `name` under `key`, or undefined; counted. */
  staticAttributes(name: string, key: string | undefined): Readonly<Record<string, string>> | undefined {
    const e = this.statics.get(name);
    const hit = key !== undefined && e !== undefined && e.key === key && this.now() - e.at <= this.maxAgeMs;
    this.options.observe?.("sysfs", hit ? "hit" : "miss");
    return hit ? e.attrs : undefined;
  }

  storeStaticAttributes(name: string, key: string, attrs: Record<string, string>): void {
    this.statics.set(name, { key, at: this.now(), attrs });
  }

  /**
   * Forgets the probes of these devices (kernel names, or paths whose basename is one), of the
   * partitions of those that are disks, and of the disks of those that are partitions; every probe
   * when `names` is undefined. The agent calls it after each step it runs, for the step's devices:
   * the write counters in the key already see the step's writes; this does not rely on them.
   */
  forget(names?: readonly string[]): void {
    if (names === undefined) {
      this.probes.clear();
      return;
    }
    const gone = new Set(names.map((n) => posix.basename(n)));
    for (const [name, e] of this.probes) if (gone.has(e.disk)) gone.add(name);
    for (const [name, e] of this.probes) if (gone.has(name)) gone.add(e.disk);
    for (const name of [...this.probes.keys()]) {
      const e = this.probes.get(name)!;
      if (gone.has(name) || gone.has(e.disk)) this.probes.delete(name);
    }
  }
}

/*
 * Why these keys.
 *
 * A cached probe may be given again only when nothing can have written to the device since it was
 * probed. (major:minor, size) is not enough: `wipefs -a`, `pvcreate` and `mkfs` keep both, and a
 * cache keyed on them hides every signature written behind the agent's back
 * (test/inventory/probe-cache.test.ts shows it on loop devices). The key of a device is:
 *
 *  - `dev` (major:minor), `size`, and `diskseq` where the kernel has it (5.15+): a disk's sequence
 *    number, new for each medium, and for each attach of a loop device, never reused while the
 *    machine runs;
 *  - the device's write and discard counters from `/sys/class/block/<name>/stat` (requests and
 *    sectors): the block layer adds every write, write-zeroes and discard that reaches the device,
 *    whoever issued it (another process, a device-mapper or md device stacked on it, a partition of
 *    it), when it completes. Reads are not in the key (probing reads). The key is read before the
 *    probe and again after it, and the probe is kept only when both are the same and no request was
 *    in flight: a write that completes during the probe changes the second key, and one still in
 *    flight changes a later key when it completes. When `queue/iostats` is 0 the counters stand still,
 *    and a kernel older than 4.18 has no discard counters: then nothing is cached;
 *  - the device node's inode, mtime and ctime (`/dev/<name>`): a write through the page cache
 *    (a `dd` without `conv=fsync` that keeps the device open) reaches the counters only at writeback
 *    or last close, but updates the node's mtime at once; a node removed and made again (another
 *    device behind the same name) has another inode;
 *  - a loop device's backing file (inode, size, mtime, ctime) and `loop/offset`: what is written to
 *    the file itself, not through the loop device, shows in no counter of the device. A loop device
 *    on a block device, or whose file cannot be looked at from here, is not cached;
 *  - for a partition, its `start`, and the whole key of its disk: a new partition table is written to
 *    the disk, not the partition, and blkid reports the partition's entry in that table;
 *  - the write and discard counters of the devices stacked with it (holders, theirs, and the other
 *    devices they hold): under dm-multipath two paths to one disk are two devices, and a write
 *    through one path moves no counter of the other, only the multipath device's and that path's.
 *
 * What no key here sees: a write through another device node (a container's own /dev) whose dirty
 * pages are not yet written back, a SCSI pass-through write (SG_IO, not counted), a shared disk
 * written by another machine (iSCSI, FC, nbd, rbd), and two paths to one disk that nothing stacks
 * (multipath not set up: a write through one path is seen by the other only when its entry ages out). The first two are caught at writeback or last
 * close, all three when the entry is older than maxAgeMs. None of them reaches a write: before one,
 * the agent discovers without the cache.
 */

/** The signature key of device `name` (a partition when `partition`), or undefined: not cacheable now. */
export async function signatureKey(
  deps: DiscoveryDeps,
  name: string,
  partition: boolean,
): Promise<SignatureKey | undefined> {
  if (!deps.stamp) return undefined;
  if (!partition) {
    const own = await diskKey(deps, name);
    return own === undefined ? undefined : { key: own, disk: name };
  }
  const dir = `/sys/class/block/${name}`;
  const [own, start, link] = await Promise.all([
    writeKey(deps, name),
    deps.readFile(`${dir}/start`),
    deps.readlink(dir),
  ]);
  // /sys/class/block/sda1 -> ../../devices/.../block/sda/sda1: the disk is the directory above.
  const disk = link === undefined ? undefined : posix.basename(posix.dirname(link));
  if (own === undefined || start === undefined || !disk) return undefined;
  const ofDisk = await diskKey(deps, disk);
  return ofDisk === undefined
    ? undefined
    : { key: `${own} start=${start.trim()} | ${disk}: ${ofDisk}`, disk };
}

/**
 * The identity key of device `name` for its static attributes: `dev`, `diskseq` (where the kernel has
 * it) and the device node's inode; undefined when it cannot be read (nothing is cached then).
 */
export async function identityKey(deps: DiscoveryDeps, name: string): Promise<string | undefined> {
  if (!deps.stamp) return undefined;
  const dir = `/sys/class/block/${name}`;
  const [dev, diskseq, node] = await Promise.all([
    deps.readFile(`${dir}/dev`),
    deps.readFile(`${dir}/diskseq`),
    deps.stamp(`/dev/${name}`),
  ]);
  if (dev === undefined || node?.type !== "block-device") return undefined;
  return `dev=${dev.trim()} diskseq=${diskseq?.trim() ?? "-"} node=${node.ino}`;
}

/** A whole device's key: its write key, iostats on, and a loop device's backing file and offset. */
async function diskKey(deps: DiscoveryDeps, name: string): Promise<string | undefined> {
  const dir = `/sys/class/block/${name}`;
  const [own, iostats, backingFile, offset] = await Promise.all([
    writeKey(deps, name),
    deps.readFile(`${dir}/queue/iostats`),
    deps.readFile(`${dir}/loop/backing_file`),
    deps.readFile(`${dir}/loop/offset`),
  ]);
  if (own === undefined || iostats?.trim() !== "1") return undefined;
  if (backingFile === undefined) return own;
  const file = await deps.stamp!(backingFile.trim());
  if (file?.type !== "file") return undefined;
  return `${own} backing=${stampText(file)} offset=${offset?.trim() ?? "-"}`;
}

/**
 * dev, size, diskseq, the write and discard counters (none in flight), the device node's stamp, and
 * the counters of the devices stacked with it (stackCounters).
 */
async function writeKey(deps: DiscoveryDeps, name: string): Promise<string | undefined> {
  const dir = `/sys/class/block/${name}`;
  const [dev, size, own, diskseq, node, stack] = await Promise.all([
    deps.readFile(`${dir}/dev`),
    deps.readFile(`${dir}/size`),
    counters(deps, name),
    deps.readFile(`${dir}/diskseq`),
    deps.stamp!(`/dev/${name}`),
    stackCounters(deps, name),
  ]);
  if (dev === undefined || size === undefined || own === undefined || node?.type !== "block-device")
    return undefined;
  if (stack === undefined) return undefined;
  return [
    `dev=${dev.trim()}`,
    `size=${size.trim()}`,
    `diskseq=${diskseq?.trim() ?? "-"}`,
    own,
    `node=${stampText(node)}`,
    ...(stack ? [`stack=${stack}`] : []),
  ].join(" ");
}

/** A device's write and discard counters as text, or undefined when unreadable or a request is in flight. */
async function counters(deps: DiscoveryDeps, name: string): Promise<string | undefined> {
  const stat = await deps.readFile(`/sys/class/block/${name}/stat`);
  const f = stat?.trim().split(/\s+/) ?? [];
  // Documentation/block/stat.rst: 4 write I/Os, 6 write sectors, 8 in flight, 11 discard I/Os, 13 discard sectors.
  if (f.length < 15 || f[8] !== "0") return undefined;
  return `writes=${f[4]}/${f[6]} discards=${f[11]}/${f[13]}`;
}

/** At most this many devices stacked with one are looked at; more: nothing cached for it. */
const STACK_LIMIT = 64;

/**
 * The counters of every device stacked with `name`: its holders (device-mapper, md), theirs, and the
 * other devices they hold. Two paths to one disk under dm-multipath are both held by the multipath
 * device: a write through the other path, or through the multipath device, moves no counter of this
 * one, but moves theirs. "" when nothing holds it; undefined when a counter cannot be read, a request
 * is in flight, or the stack is larger than STACK_LIMIT.
 */
async function stackCounters(deps: DiscoveryDeps, name: string): Promise<string | undefined> {
  const seen = new Set([name]);
  const queue = [name];
  while (queue.length) {
    const n = queue.shift()!;
    for (const holder of (await deps.readdir(`/sys/class/block/${n}/holders`)) ?? []) {
      if (seen.has(holder)) continue;
      seen.add(holder);
      queue.push(holder);
      for (const slave of (await deps.readdir(`/sys/class/block/${holder}/slaves`)) ?? [])
        if (!seen.has(slave)) {
          seen.add(slave);
          queue.push(slave);
        }
    }
    if (seen.size > STACK_LIMIT) return undefined;
  }
  seen.delete(name);
  const names = [...seen].sort();
  const each = await Promise.all(names.map((n) => counters(deps, n)));
  if (each.some((c) => c === undefined)) return undefined;
  return names.map((n, i) => `${n}:${each[i]}`).join(",");
}

function stampText(s: FileStamp): string {
  return `${s.ino}:${s.size}:${s.mtimeNs}:${s.ctimeNs}`;
}
