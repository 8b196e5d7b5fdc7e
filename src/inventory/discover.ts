import { posix } from "node:path";
import { BLKID_NOTHING_FOUND, blkidArgv } from "./blkid";
import { devPath, linkTarget } from "./device-path";
import { lsblkArgv, parseLsblk, type LsblkDevice } from "./lsblk";
import { fullreportArgv } from "./lvm-report";
import { mountLinesFor, parseMounts, rootMountLine, swapLinesFor } from "./mounts";
import { SYSFS_ATTRIBUTES, SYSFS_HOLDERS, SYSFS_VPD_UNIT_SERIAL, SYSFS_VPD_UNIT_SERIAL_HEX } from "./sysfs";
import type { RawNodeInventory } from "./types";
import { wipefsArgv, wipefsEntries } from "./wipefs";

/** What discovery needs from the machine; tests pass fakes. */
export interface DiscoveryDeps {
  /**
   * Runs a program (argv, never a shell string) with LC_ALL=C and resolves with its stdout when it exits 0.
   * Otherwise rejects with an Error whose `exitCode` (or, as from execFile, `code`) is the exit status,
   * or `code: "ENOENT"` when the program is not installed; the message should carry stderr.
   */
  run(argv: readonly string[]): Promise<{ stdout: string }>;
  /** A file's content, or undefined when it does not exist. */
  readFile(path: string): Promise<string | undefined>;
  /** A binary file's bytes (a SCSI VPD page), or undefined when it does not exist or cannot be read. */
  readBytes(path: string): Promise<Uint8Array | undefined>;
  /** A directory's entry names, or undefined when it does not exist. */
  readdir(path: string): Promise<readonly string[] | undefined>;
  /** A symlink's target as stored, or undefined when the path is not a symlink. */
  readlink(path: string): Promise<string | undefined>;
}

export interface DiscoverOptions {
  /** The node name recorded in the result. @example "edge-1" */
  readonly node: string;
  /** Kubernetes node labels recorded in the result. @default {} (omitted) */
  readonly labels?: Readonly<Record<string, string>>;
  /**
   * Look only at these devices (and their partitions and the devices stacked on them): lsblk is given
   * them as arguments, lvm gets a matching `--devices` list, and links, mounts and swaps are filtered to
   * them. Lets two agents (or tests) on one machine see only their own devices.
   * @default every block device lsblk lists
   * @example ["/dev/loop3", "/dev/loop4"]
   */
  readonly devices?: readonly string[];
  /**
   * How many probe commands (wipefs, blkid) run at a time. wipefs lists the devices in up to this many
   * groups, one call per group; blkid runs once per device. lvm's report and the sysfs and link reads
   * run beside the probes.
   * @default 4 (on 2 shared cores 2 to 8 were within noise of each other, 1 was ~1.6× slower at 64
   * devices; with real disks more probes at once also overlap their I/O: docs/inventory.md)
   */
  readonly probeConcurrency?: number;
  /**
   * The mount table to read. When commands run in the host's namespaces (nsenter) this must be the
   * host's, pid 1's: a container's own table hides which disk holds the host's `/`.
   * @default "/proc/self/mountinfo"
   * @example "/proc/1/mountinfo"
   */
  readonly mountinfo?: string;
}

/** Probe commands at a time unless DiscoverOptions.probeConcurrency says otherwise. */
export const DEFAULT_PROBE_CONCURRENCY = 4;

/**
 * Collects a RawNodeInventory on a live machine: lsblk, `lvm fullreport`, `wipefs --json --no-act` and
 * `blkid -p` on every whole device and partition, sysfs facts, udev and device-mapper links, mountinfo
 * and /proc/swaps. Reads only; no command it runs writes to a device.
 * lsblk runs first (it says which devices there are; without an allow-list lvm's report runs beside
 * it); then the probes (at most `probeConcurrency` commands at a time), lvm's report and the file
 * reads run side by side. The result does not depend on the order they finish in, and discovery
 * returns or fails only when no command it started is still running.
 * A device whose probe fails is recorded in `probeErrors` (and so comes out `probed: false`); failures
 * of lsblk or lvm fail the discovery with the command named. A device of `devices` that does not exist
 * (a detached loop device, a removed device-mapper device, a pulled disk) is recorded in `missingDevices`
 * and the rest are discovered: lvm then reports the physical volume that was on it as missing.
 */
export async function discoverNode(deps: DiscoveryDeps, options: DiscoverOptions): Promise<RawNodeInventory> {
  if (options.devices?.length === 0) {
    throw new Error(
      `node ${JSON.stringify(options.node)}: devices is an empty list; leave it out to discover every device`,
    );
  }
  const concurrency = options.probeConcurrency ?? DEFAULT_PROBE_CONCURRENCY;
  if (!Number.isInteger(concurrency) || concurrency < 1)
    throw new Error(`probeConcurrency must be a whole number >= 1 (got ${concurrency})`);
  const restrict = options.devices !== undefined;
  // Without an allow-list lvm's report does not depend on lsblk's output, so both run at once. (A
  // handler now: a failure while lsblk still runs is not unhandled; it is reported below.)
  const everyPv = restrict ? undefined : lvmReport(deps, undefined);
  everyPv?.catch(() => undefined);
  const { json: lsblk, missing } = await afterwards(everyPv, () => lsblkOf(deps, options.devices));
  const devices = await afterwards(everyPv, async () => parseLsblkOutput(lsblk));
  const targets = devices.filter(isProbeTarget);
  const targetPaths = targets.map((d) => d.path);

  // lvm looks for physical volumes on the allowed devices and their partitions only: not on the
  // logical volumes (or other device-mapper devices) stacked on them, which are not the caller's
  // devices (the agent's runner refuses to name them) and hold no physical volume of ours.
  const pvReport = everyPv ?? lvmReport(deps, targetPaths);
  const probing = probeAll(deps, targets, concurrency);
  const [probes, lvm, sysfs, links, mountinfo, swaps] = await allSettled([
    probing,
    pvReport,
    sysfsFacts(deps, devices),
    linkMap(deps, restrict ? new Set(devices.flatMap((d) => [d.kname, d.path])) : undefined),
    deps.readFile(options.mountinfo ?? "/proc/self/mountinfo").then((text) => text ?? ""),
    deps.readFile("/proc/swaps").then((text) => text ?? ""),
  ]);
  const names = new Set([...devices.flatMap((d) => [d.kname, d.path]), ...Object.keys(links)]);
  const majMins = new Set(devices.flatMap((d) => (d.majMin ? [d.majMin] : [])));

  return {
    name: options.node,
    ...(options.labels ? { labels: options.labels } : {}),
    lsblk,
    lvm,
    signatures: probes.signatures,
    probed: probes.probed,
    ...(Object.keys(probes.errors).length ? { probeErrors: probes.errors } : {}),
    ...(missing.length ? { missingDevices: missing } : {}),
    blkid: probes.blkid,
    sysfs,
    links,
    mounts: restrict
      ? mountLinesFor(mountinfo, majMins, names) + (await unresolvedRootLine(deps, mountinfo, majMins, names))
      : mountinfo,
    swaps: restrict ? swapLinesFor(swaps, names) : swaps,
  };
}

/**
 * The mount line of `/` when discovery is restricted to some devices and `/` is mounted from a
 * `/dev/...` source that is none of them and names no block device of this machine either (btrfs's
 * anonymous `0:33`; a /proc/mounts line without a device number): "" otherwise. The restricted mount
 * table keeps only the lines of the allowed devices, so without this line the planner's backstop (an
 * unresolved root mount makes every candidate unsafe) would never see such a root. A root on a real
 * device outside the list (`/sys/dev/block/8:1` exists) is not one of ours and stays filtered out.
 */
async function unresolvedRootLine(
  deps: DiscoveryDeps,
  mountinfo: string,
  majMins: ReadonlySet<string>,
  names: ReadonlySet<string>,
): Promise<string> {
  const line = rootMountLine(mountinfo);
  if (!line) return "";
  const [root] = parseMounts(line);
  if (!root || !root.source.startsWith("/dev/")) return "";
  if (root.majMin !== undefined && majMins.has(root.majMin)) return "";
  if (names.has(root.source)) return "";
  if (root.majMin !== undefined && (await deps.readlink(`/sys/dev/block/${root.majMin}`)) !== undefined)
    return "";
  return `${line}\n`;
}

/** Whole devices (nothing under them in lsblk's tree) and partitions: where signatures decide. */
function isProbeTarget(d: LsblkDevice): boolean {
  return d.parents.length === 0 || d.type === "part";
}

/** lsblk's exit status when some of the devices it was given were not found, and when none were. */
export const LSBLK_SOME_NOT_FOUND = 64;
export const LSBLK_NONE_FOUND = 32;

/**
 * lsblk's JSON for every device, or for `devices` and what sits on them; a device of `devices` lsblk
 * cannot find is left out and named in `missing`. lsblk exits 64 when some of the devices it was given
 * are not found (32 when none are) and says which on stderr only for some of them (a detached loop
 * device gets no message), so then each device is asked on its own: 32 means that one is missing.
 * Any other failure fails, naming the command.
 */
async function lsblkOf(
  deps: DiscoveryDeps,
  devices: readonly string[] | undefined,
): Promise<{ json: unknown; missing: string[] }> {
  try {
    return { json: await runJson(deps, lsblkArgv(devices)), missing: [] };
  } catch (err) {
    const status = exitStatus(err);
    if (!devices || (status !== LSBLK_SOME_NOT_FOUND && status !== LSBLK_NONE_FOUND)) throw err;
  }
  const each = await Promise.all(
    devices.map(async (device) => {
      try {
        return { device, json: await runJson(deps, lsblkArgv([device])) };
      } catch (err) {
        if (exitStatus(err) === LSBLK_NONE_FOUND) return { device, json: undefined };
        throw err;
      }
    }),
  );
  const blockdevices = each.flatMap(({ json }) =>
    json === undefined ? [] : ((json as { blockdevices?: unknown[] }).blockdevices ?? []),
  );
  return {
    json: { blockdevices },
    missing: each.filter(({ json }) => json === undefined).map(({ device }) => device),
  };
}

function parseLsblkOutput(json: unknown): LsblkDevice[] {
  try {
    return parseLsblk(json);
  } catch (err) {
    throw new Error(`${lsblkArgv().join(" ")}: unexpected output: ${(err as Error).message}`);
  }
}

interface Probes {
  signatures: unknown[];
  probed: string[];
  errors: Record<string, string>;
  blkid: Record<string, string>;
}

/** What probing one device gave: wipefs's entries ([] when it failed), blkid's output, or why probing failed. */
interface DeviceProbe {
  readonly entries: readonly unknown[];
  readonly blkid?: string;
  readonly error?: string;
}

/**
 * Probes every target (sorted by kname) with wipefs and then, where wipefs succeeded and blkid can add
 * something (withBlkid), blkid; at most
 * `concurrency` commands at a time. The targets are split into up to `concurrency` contiguous groups,
 * each listed by one wipefs call (see wipefsGroup); each device's blkid starts as soon as its group is
 * done. The result is in target order and the same as probing every device alone, one after the other.
 */
async function probeAll(
  deps: DiscoveryDeps,
  targets: readonly LsblkDevice[],
  concurrency: number,
): Promise<Probes> {
  const limit = limiter(concurrency);
  const partitions = new Set(targets.filter((d) => d.type === "part").map((d) => d.kname));
  const probeGroup = async (group: readonly string[]) =>
    Promise.all(
      (await wipefsGroup(deps, group, limit)).map((wipefs) => withBlkid(deps, wipefs, limit, partitions)),
    );
  const knames = targets.map((d) => d.kname);
  const probes = (await Promise.all(contiguousGroups(knames, concurrency).map(probeGroup))).flat();

  const out: Probes = { signatures: [], probed: [], errors: {}, blkid: {} };
  for (const [kname, probe] of probes) {
    out.signatures.push(...probe.entries);
    if (probe.error !== undefined) out.errors[kname] = probe.error;
    else {
      out.probed.push(kname);
      out.blkid[kname] = probe.blkid ?? "";
    }
  }
  return out;
}

/**
 * The wipefs entries of each device of a group. A group of devices directly under /dev is listed by one
 * `wipefs --no-act` call over all of them: wipefs prints each entry's `device` as the kernel name
 * ("loop3"), which names exactly one device of the group. wipefs stops at the first device it cannot
 * probe and prints nothing then; so when that call fails, or prints an entry that cannot be attributed
 * to exactly one device of the group, every device is probed on its own, as a lone device always is:
 * each failure is recorded for its own device and does not hide the others.
 */
async function wipefsGroup(
  deps: DiscoveryDeps,
  group: readonly string[],
  limit: Limit,
): Promise<Array<[string, DeviceProbe]>> {
  if (group.length > 1 && group.every((kname) => kname === devPath(posix.basename(kname)))) {
    const argv = [...wipefsArgv(group[0]!).slice(0, -1), ...group];
    try {
      const entries = wipefsEntries((await limit(() => deps.run(argv))).stdout);
      const byDevice = attribute(entries, group);
      if (byDevice) return group.map((kname) => [kname, { entries: byDevice.get(kname)! }]);
    } catch {
      /* probe each device on its own, below */
    }
  }
  return Promise.all(
    group.map(async (kname): Promise<[string, DeviceProbe]> => {
      const argv = wipefsArgv(kname);
      try {
        return [kname, { entries: wipefsEntries((await limit(() => deps.run(argv))).stdout) }];
      } catch (err) {
        return [kname, { entries: [], error: `${argv.join(" ")}: ${(err as Error).message}` }];
      }
    }),
  );
}

/** Entries of a multi-device wipefs call by the group's kname each names, or undefined when one names none of them. */
export function attribute(
  entries: readonly unknown[],
  group: readonly string[],
): Map<string, unknown[]> | undefined {
  const byDevice = new Map(group.map((kname) => [kname, [] as unknown[]]));
  for (const entry of entries) {
    const device = (entry as { device?: unknown } | null)?.device;
    const list = typeof device === "string" && device !== "" ? byDevice.get(devPath(device)) : undefined;
    if (!list) return undefined;
    list.push(entry);
  }
  return byDevice;
}

/**
 * A device's wipefs result with blkid's output ("" when it found nothing) or failure; no blkid after a
 * failed wipefs. Nor on a whole device where wipefs found nothing: wipefs lists every superblock and
 * partition table libblkid's probes know (bad checksums too), blkid -p only the first it believes, so
 * blkid finds nothing there either. Only a partition gets facts from elsewhere, its entry in the
 * parent's table (PART_ENTRY_*), so partitions are always asked. On a node of blank disks this saves
 * one process per disk (test/inventory/discover.test.ts checks the premise on real signatures).
 */
async function withBlkid(
  deps: DiscoveryDeps,
  [kname, wipefs]: [string, DeviceProbe],
  limit: Limit,
  partitions: ReadonlySet<string>,
): Promise<[string, DeviceProbe]> {
  if (wipefs.error !== undefined) return [kname, wipefs];
  if (wipefs.entries.length === 0 && !partitions.has(kname)) return [kname, { ...wipefs, blkid: "" }];
  const argv = blkidArgv(kname);
  try {
    return [kname, { ...wipefs, blkid: (await limit(() => deps.run(argv))).stdout }];
  } catch (err) {
    if (exitStatus(err) === BLKID_NOTHING_FOUND) return [kname, { ...wipefs, blkid: "" }];
    return [kname, { ...wipefs, error: `${argv.join(" ")}: ${(err as Error).message}` }];
  }
}

/** `lvm fullreport` JSON, or null when lvm is not installed. */
async function lvmReport(deps: DiscoveryDeps, devices: readonly string[] | undefined): Promise<unknown> {
  try {
    return await runJson(deps, fullreportArgv(devices));
  } catch (err) {
    if (exitStatus(err) === "ENOENT") return null;
    throw err;
  }
}

/**
 * Every device's SYSFS_ATTRIBUTES, its SCSI unit serial page (as hex) and holders, all read at once;
 * keys in device, then attribute order.
 */
async function sysfsFacts(
  deps: DiscoveryDeps,
  devices: readonly LsblkDevice[],
): Promise<Record<string, Record<string, string>>> {
  const perDevice = await Promise.all(
    devices.map(async (d) => {
      const name = posix.basename(d.kname);
      const dir = `/sys/class/block/${name}`;
      const [values, unitSerialPage, holders] = await Promise.all([
        Promise.all(SYSFS_ATTRIBUTES.map((attr) => deps.readFile(`${dir}/${attr}`))),
        deps.readBytes(`${dir}/${SYSFS_VPD_UNIT_SERIAL}`),
        deps.readdir(`${dir}/holders`),
      ]);
      const attrs: Record<string, string> = {};
      SYSFS_ATTRIBUTES.forEach((attr, i) => {
        if (values[i] !== undefined) attrs[attr] = values[i];
      });
      if (unitSerialPage) attrs[SYSFS_VPD_UNIT_SERIAL_HEX] = Buffer.from(unitSerialPage).toString("hex");
      attrs[SYSFS_HOLDERS] = (holders ?? []).join(" ");
      return [name, attrs] as const;
    }),
  );
  return Object.fromEntries(perDevice);
}

/** Links under /dev/disk/by-* and /dev/mapper → the absolute path they point at; only to `allowed` when given. */
async function linkMap(
  deps: DiscoveryDeps,
  allowed: ReadonlySet<string> | undefined,
): Promise<Record<string, string>> {
  const dirs = ((await deps.readdir("/dev/disk")) ?? [])
    .filter((d) => d.startsWith("by-"))
    .map((d) => `/dev/disk/${d}`);
  const links = await Promise.all(
    [...dirs.sort(), "/dev/mapper"].map(async (dir) =>
      ((await deps.readdir(dir)) ?? [])
        .filter((entry) => !(dir === "/dev/mapper" && entry === "control"))
        .sort()
        .map((entry) => `${dir}/${entry}`),
    ),
  );
  const targets = await Promise.all(
    links.flat().map(async (link) => {
      const target = await deps.readlink(link);
      return target === undefined ? [] : [[link, linkTarget(link, target)] as const];
    }),
  );
  return Object.fromEntries(targets.flat().filter(([, resolved]) => !allowed || allowed.has(resolved)));
}

async function runJson(deps: DiscoveryDeps, argv: readonly string[]): Promise<unknown> {
  const { stdout } = await deps.run(argv);
  try {
    return JSON.parse(stdout);
  } catch (err) {
    throw new Error(`${argv.join(" ")}: printed something that is not JSON: ${(err as Error).message}`);
  }
}

/** The exit status of a failed run (`exitCode`, or execFile's `code`), or "ENOENT". */
function exitStatus(err: unknown): number | string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { exitCode?: unknown; code?: unknown };
  const status = e.exitCode ?? e.code;
  return typeof status === "number" || typeof status === "string" ? status : undefined;
}

/** `step`'s result; when it fails, its error once `running` (if any) has finished too, so no command is left running. */
async function afterwards<T>(running: Promise<unknown> | undefined, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    await running?.catch(() => undefined);
    throw err;
  }
}

/** Waits for every promise, then fails with the first one (in list order) that failed, if any. */
async function allSettled<T extends readonly unknown[]>(
  promises: readonly [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> {
  const settled = await Promise.allSettled(promises);
  for (const s of settled) if (s.status === "rejected") throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** Runs a task once a place is free; resolves or rejects as the task does. */
type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/** A Limit with `max` places: at most `max` tasks run at once, started in the order they were given. */
export function limiter(max: number): Limit {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/**
 * `items` in order, cut into min(count, items.length) groups whose sizes differ by at most one:
 * [a,b,c,d,e] in 2 → [[a,b,c],[d,e]].
 */
export function contiguousGroups<T>(items: readonly T[], count: number): T[][] {
  const groups = Math.min(count, items.length);
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < groups; i++) {
    const size = Math.floor(items.length / groups) + (i < items.length % groups ? 1 : 0);
    out.push(items.slice(start, start + size));
    start += size;
  }
  return out;
}
