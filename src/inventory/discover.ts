import { posix } from "node:path";
import { BLKID_NOTHING_FOUND, blkidArgv } from "./blkid";
import { linkTarget } from "./device-path";
import { lsblkArgv, parseLsblk, type LsblkDevice } from "./lsblk";
import { fullreportArgv } from "./lvm-report";
import { mountLinesFor, swapLinesFor } from "./mounts";
import { SYSFS_ATTRIBUTES, SYSFS_HOLDERS } from "./sysfs";
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
}

/**
 * Collects a RawNodeInventory on a live machine: lsblk, `lvm fullreport`, `wipefs --json --no-act` and
 * `blkid -p` on every whole device and partition, sysfs facts, udev and device-mapper links, mountinfo
 * and /proc/swaps. Reads only; no command it runs writes to a device.
 * A device whose probe fails is recorded in `probeErrors` (and so comes out `probed: false`); failures
 * of lsblk or lvm fail the discovery with the command named.
 */
export async function discoverNode(deps: DiscoveryDeps, options: DiscoverOptions): Promise<RawNodeInventory> {
  if (options.devices?.length === 0) {
    throw new Error(
      `node ${JSON.stringify(options.node)}: devices is an empty list; leave it out to discover every device`,
    );
  }
  const lsblk = await runJson(deps, lsblkArgv(options.devices));
  const devices = parseLsblkOutput(lsblk);
  const restrict = options.devices !== undefined;

  const probes = await probeAll(deps, devices.filter(isProbeTarget));
  const lvm = await lvmReport(deps, restrict ? devices.map((d) => d.path) : undefined);
  const sysfs = await sysfsFacts(deps, devices);
  const links = await linkMap(
    deps,
    restrict ? new Set(devices.flatMap((d) => [d.kname, d.path])) : undefined,
  );

  const mountinfo = (await deps.readFile("/proc/self/mountinfo")) ?? "";
  const swaps = (await deps.readFile("/proc/swaps")) ?? "";
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
    blkid: probes.blkid,
    sysfs,
    links,
    mounts: restrict ? mountLinesFor(mountinfo, majMins, names) : mountinfo,
    swaps: restrict ? swapLinesFor(swaps, names) : swaps,
  };
}

/** Whole devices (nothing under them in lsblk's tree) and partitions: where signatures decide. */
function isProbeTarget(d: LsblkDevice): boolean {
  return d.parents.length === 0 || d.type === "part";
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

async function probeAll(deps: DiscoveryDeps, targets: readonly LsblkDevice[]): Promise<Probes> {
  const out: Probes = { signatures: [], probed: [], errors: {}, blkid: {} };
  for (const { kname } of targets) {
    const argv = wipefsArgv(kname);
    try {
      out.signatures.push(...wipefsEntries((await deps.run(argv)).stdout));
      out.probed.push(kname);
    } catch (err) {
      out.errors[kname] = `${argv.join(" ")}: ${(err as Error).message}`;
      continue;
    }
    const blkid = blkidArgv(kname);
    try {
      out.blkid[kname] = (await deps.run(blkid)).stdout;
    } catch (err) {
      if (exitStatus(err) === BLKID_NOTHING_FOUND) out.blkid[kname] = "";
      else out.errors[kname] = `${blkid.join(" ")}: ${(err as Error).message}`;
    }
  }
  out.probed = out.probed.filter((d) => !(d in out.errors));
  return out;
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

async function sysfsFacts(
  deps: DiscoveryDeps,
  devices: readonly LsblkDevice[],
): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const d of devices) {
    const name = posix.basename(d.kname);
    const dir = `/sys/class/block/${name}`;
    const attrs: Record<string, string> = {};
    for (const attr of SYSFS_ATTRIBUTES) {
      const value = await deps.readFile(`${dir}/${attr}`);
      if (value !== undefined) attrs[attr] = value;
    }
    attrs[SYSFS_HOLDERS] = ((await deps.readdir(`${dir}/holders`)) ?? []).join(" ");
    out[name] = attrs;
  }
  return out;
}

/** Links under /dev/disk/by-* and /dev/mapper → the absolute path they point at; only to `allowed` when given. */
async function linkMap(
  deps: DiscoveryDeps,
  allowed: ReadonlySet<string> | undefined,
): Promise<Record<string, string>> {
  const dirs = ((await deps.readdir("/dev/disk")) ?? [])
    .filter((d) => d.startsWith("by-"))
    .map((d) => `/dev/disk/${d}`);
  const out: Record<string, string> = {};
  for (const dir of [...dirs.sort(), "/dev/mapper"]) {
    for (const entry of ((await deps.readdir(dir)) ?? []).slice().sort()) {
      if (dir === "/dev/mapper" && entry === "control") continue;
      const link = `${dir}/${entry}`;
      const target = await deps.readlink(link);
      if (target === undefined) continue;
      const resolved = linkTarget(link, target);
      if (!allowed || allowed.has(resolved)) out[link] = resolved;
    }
  }
  return out;
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
