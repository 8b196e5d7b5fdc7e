import { posix } from "node:path";
import { afterwards, allSettled } from "./concurrency";
import { linkTarget } from "./device-path";
import { exitStatus, runJson, type DiscoveryDeps } from "./discovery-deps";
import { lsblkArgv, parseLsblk, type LsblkDevice } from "./lsblk";
import {
  DEVICES_FILE_CONFIG_ARGV,
  LVMDEVICES_LIST_ARGV,
  NO_DEVICES_FILE,
  type RawDevicesFile,
} from "./devices-file";
import { fullreportArgv } from "./lvm-report";
import { mountLinesFor, parseMounts, rootMountLine, swapLinesFor } from "./mounts";
import { collectProbes, probeAll, probeDevices, type DeviceProbe, type Probes } from "./probe";
import { identityKey, type DiscoveryCache, type SignatureKey } from "./probe-cache";
import { SYSFS_ATTRIBUTES, SYSFS_HOLDERS, SYSFS_VPD_UNIT_SERIAL, SYSFS_VPD_UNIT_SERIAL_HEX } from "./sysfs";
import type { RawNodeInventory } from "./types";

// Discovery's parts live beside it; what this file exported stays importable from here.
export type { DiscoveryDeps } from "./discovery-deps";
export { contiguousGroups, limiter } from "./concurrency";
export { attribute } from "./probe";

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
  /**
   * Keep what probing and sysfs said about each device here, and give it again while the device's
   * key says it cannot have changed (./probe-cache.ts: write counters, diskseq, the device node's and
   * a loop device's backing file's change times). @default nothing cached
   */
  readonly cache?: DiscoveryCache;
  /**
   * Also read lvm's devices file (`lvm config` of its settings, `lvm lvmdevices` when it is on:
   * ./devices-file.ts). Needs a runner that gives those commands the host's devices-file settings
   * (the agent's does). @default false
   */
  readonly devicesFile?: boolean;
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
  const probing = options.cache
    ? probeThroughCache(deps, targets, concurrency, options.cache)
    : probeAll(deps, targets, concurrency);
  const [probes, lvm, devicesFile, sysfs, links, mountinfo, swaps] = await allSettled([
    probing,
    pvReport,
    options.devicesFile ? readDevicesFile(deps) : Promise.resolve(undefined),
    sysfsFacts(deps, devices, options.cache),
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
    ...(devicesFile ? { devicesFile } : {}),
  };
}

/**
 * lvm's devices-file settings and, when it is on, its entries (./devices-file.ts); undefined when lvm is
 * not installed or has no devices file (lvm before 2.03.12 does not know the setting).
 */
async function readDevicesFile(deps: DiscoveryDeps): Promise<RawDevicesFile | undefined> {
  let config: string;
  try {
    config = (await deps.run(DEVICES_FILE_CONFIG_ARGV)).stdout;
  } catch (err) {
    if (exitStatus(err) === "ENOENT" || /not found/i.test((err as Error).message)) return undefined;
    throw err;
  }
  if (!/^\s*use_devicesfile=1\s*$/m.test(config)) return { config, list: null };
  try {
    return { config, list: (await deps.run(LVMDEVICES_LIST_ARGV)).stdout };
  } catch (err) {
    if (NO_DEVICES_FILE.test((err as Error).message)) return { config, list: null };
    throw err;
  }
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
 * probeAll through the cache: a device whose signature key (read fresh) is the one its stored probe
 * was made under is not probed again; the others are probed together, as probeAll would. A probe is
 * stored only when it succeeded and the device's key read after it is the one read before it (no
 * write completed meanwhile). The result is what probeAll gives when nothing changed.
 */
async function probeThroughCache(
  deps: DiscoveryDeps,
  targets: readonly LsblkDevice[],
  concurrency: number,
  cache: DiscoveryCache,
): Promise<Probes> {
  const keyOf = (d: LsblkDevice): Promise<SignatureKey | undefined> =>
    cache.signatureKey(deps, posix.basename(d.kname), d.type === "part").catch(() => undefined);
  const before = new Map(await Promise.all(targets.map(async (d) => [d.kname, await keyOf(d)] as const)));
  const known = new Map<string, DeviceProbe>();
  for (const d of targets) {
    const hit = cache.probe(posix.basename(d.kname), before.get(d.kname)?.key);
    if (hit) known.set(d.kname, { entries: hit.entries, blkid: hit.blkid });
  }
  const misses = targets.filter((d) => !known.has(d.kname));
  if (misses.length) {
    const fresh = await probeDevices(deps, misses, concurrency);
    const after = new Map(await Promise.all(misses.map(async (d) => [d.kname, await keyOf(d)] as const)));
    for (const [kname, probe] of fresh) {
      known.set(kname, probe);
      const key = before.get(kname);
      if (probe.error === undefined && key !== undefined && after.get(kname)?.key === key.key)
        cache.storeProbe(posix.basename(kname), key, { entries: probe.entries, blkid: probe.blkid ?? "" });
    }
  }
  return collectProbes(targets.map((d) => [d.kname, known.get(d.kname)!] as const));
}

/**
 * Every device's SYSFS_ATTRIBUTES, its SCSI unit serial page (as hex) and holders, all read at once;
 * keys in device, then attribute order. With a cache, a device whose identity key is the one its
 * static attributes were stored under has only the others read.
 */
async function sysfsFacts(
  deps: DiscoveryDeps,
  devices: readonly LsblkDevice[],
  cache: DiscoveryCache | undefined,
): Promise<Record<string, Record<string, string>>> {
  const perDevice = await Promise.all(
    devices.map(async (d) => {
      const name = posix.basename(d.kname);
      const dir = `/sys/class/block/${name}`;
      const identity = cache ? await identityKey(deps, name).catch(() => undefined) : undefined;
      const known = cache ? cache.staticAttributes(name, identity) : undefined;
      const wanted = known ? SYSFS_ATTRIBUTES.filter((a) => !a.static) : SYSFS_ATTRIBUTES;
      const [values, unitSerialPage, holders] = await Promise.all([
        Promise.all(wanted.map((a) => deps.readFile(`${dir}/${a.name}`))),
        known ? undefined : deps.readBytes(`${dir}/${SYSFS_VPD_UNIT_SERIAL}`),
        deps.readdir(`${dir}/holders`),
      ]);
      const read = new Map(wanted.map((a, i) => [a.name, values[i]]));
      const attrs: Record<string, string> = {};
      for (const a of SYSFS_ATTRIBUTES) {
        const value = known && a.static ? known[a.name] : read.get(a.name);
        if (value !== undefined) attrs[a.name] = value;
      }
      const pageHex = known
        ? known[SYSFS_VPD_UNIT_SERIAL_HEX]
        : unitSerialPage && Buffer.from(unitSerialPage).toString("hex");
      if (pageHex) attrs[SYSFS_VPD_UNIT_SERIAL_HEX] = pageHex;
      attrs[SYSFS_HOLDERS] = (holders ?? []).join(" ");
      if (cache && !known && identity !== undefined && (await identityKey(deps, name)) === identity) {
        const statics = SYSFS_ATTRIBUTES.filter((a) => a.static && attrs[a.name] !== undefined);
        cache.storeStaticAttributes(name, identity, {
          ...Object.fromEntries(statics.map((a) => [a.name, attrs[a.name]!])),
          ...(pageHex ? { [SYSFS_VPD_UNIT_SERIAL_HEX]: pageHex } : {}),
        });
      }
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
