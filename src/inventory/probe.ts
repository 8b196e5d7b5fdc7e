import { posix } from "node:path";
import { BLKID_NOTHING_FOUND, blkidArgv } from "./blkid";
import { contiguousGroups, limiter, type Limit } from "./concurrency";
import { devPath } from "./device-path";
import { exitStatus, type DiscoveryDeps } from "./discovery-deps";
import type { LsblkDevice } from "./lsblk";
import { wipefsArgv, wipefsEntries } from "./wipefs";

/*
 * Probing devices for signatures during discovery (src/inventory/discover.ts): wipefs on every
 * target, in groups, and blkid where it can add something.
 */

export interface Probes {
  signatures: unknown[];
  probed: string[];
  errors: Record<string, string>;
  blkid: Record<string, string>;
}

/** What probing one device gave: wipefs's entries ([] when it failed), blkid's output, or why probing failed. */
export interface DeviceProbe {
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
export async function probeAll(
  deps: DiscoveryDeps,
  targets: readonly LsblkDevice[],
  concurrency: number,
): Promise<Probes> {
  return collectProbes(await probeDevices(deps, targets, concurrency));
}

/** probeAll's work, one [kname, DeviceProbe] per target in target order, not yet collected. */
export async function probeDevices(
  deps: DiscoveryDeps,
  targets: readonly LsblkDevice[],
  concurrency: number,
): Promise<Array<[string, DeviceProbe]>> {
  const limit = limiter(concurrency);
  const partitions = new Set(targets.filter((d) => d.type === "part").map((d) => d.kname));
  const probeGroup = async (group: readonly string[]) =>
    Promise.all(
      (await wipefsGroup(deps, group, limit)).map((wipefs) => withBlkid(deps, wipefs, limit, partitions)),
    );
  const knames = targets.map((d) => d.kname);
  return (await Promise.all(contiguousGroups(knames, concurrency).map(probeGroup))).flat();
}

/** The raw inventory's probe fields from each device's probe, in the order given. */
export function collectProbes(probes: ReadonlyArray<readonly [string, DeviceProbe]>): Probes {
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
