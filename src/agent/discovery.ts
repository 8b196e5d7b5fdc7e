import * as fsSync from "node:fs";
import * as fs from "node:fs/promises";
import * as path from "node:path";
import { discoverNode, type DiscoveryDeps } from "../inventory/discover";
import type { FileStamp } from "../inventory/discovery-deps";
import { DEVICES_FILE_CONFIG_ARGV, LVMDEVICES_LIST_ARGV } from "../inventory/devices-file";
import type { DiscoveryCache } from "../inventory/probe-cache";
import { parseNodeInventory } from "../inventory/parse";
import type { NodeInventory } from "../inventory/types";
import { CommandRefusedError, type Runner } from "./lvm-runner";

export interface DiscoveryArgs {
  readonly node: string;
  /** Every command goes through the agent's runner (allow-list, filter, log). */
  readonly run: Runner;
  /** The agent's devices, when restricted. @default every device */
  readonly devices?: readonly string[];
  /** The mount table to read (AgentConfig.mountinfo). @default "/proc/self/mountinfo" */
  readonly mountinfo?: string;
  /**
   * Keep probes and static sysfs attributes between discoveries (src/inventory/probe-cache.ts); off
   * with --no-probe-cache. @default nothing cached
   */
  readonly cache?: DiscoveryCache;
  /**
   * Where the files that commands see (a loop device's backing file, a host path) are visible to this
   * process: "/" when commands run here, the --host-root under a --command-prefix, or undefined when
   * this process cannot see them (a prefix without --host-root): then no loop device is cached, as
   * its backing file cannot be looked at. @default "/"
   */
  readonly hostRoot?: string | undefined;
}

export interface DiscoverCall {
  /**
   * Discover without the cache: every device probed and read afresh, exactly as with --no-probe-cache
   * (and the cache left as it is). An apply's and a teardown's discovery, on which writes are decided.
   * @default false
   */
  readonly fresh?: boolean;
}

/** The agent's discovery, and what it is told after each step it runs. */
export interface AgentDiscovery {
  (call?: DiscoverCall): Promise<NodeInventory>;
  /** The agent ran a step on these devices: forget what was cached about them. */
  touched(devices: readonly string[]): void;
}

/**
 * This node's inventory: src/inventory's discovery through the agent's runner, parsed; through
 * `args.cache` when given, fresh with `{fresh: true}`.
 */
export function createDiscovery(args: DiscoveryArgs): AgentDiscovery {
  const deps = hostDiscoveryDeps(args.run, "hostRoot" in args ? { hostRoot: args.hostRoot } : {});
  const discover = async (call?: DiscoverCall) =>
    parseNodeInventory(
      await discoverNode(deps, {
        node: args.node,
        devicesFile: true,
        ...(args.devices ? { devices: args.devices } : {}),
        ...(args.mountinfo ? { mountinfo: args.mountinfo } : {}),
        // A fresh discovery does not touch the cache at all: no lookup, no key read, nothing stored.
        ...(args.cache && !call?.fresh ? { cache: args.cache } : {}),
      }),
    );
  return Object.assign(discover, {
    touched: (devices: readonly string[]) => {
      const names = devices.map(kernelName);
      // A device whose name cannot be resolved now (removed by the step): forget every device.
      args.cache?.forget(names.every((n) => n !== undefined) ? names : undefined);
    },
  });
}

/** A device path's kernel device ("/dev/disk/by-id/x" -> "/dev/sdb"), undefined when it cannot be resolved. */
function kernelName(device: string): string | undefined {
  try {
    return fsSync.realpathSync(device);
  } catch {
    return undefined;
  }
}

/**
 * Discovery's commands go through `run`; its file, directory and link reads go to this machine. The
 * discovery cache's stamps of files outside /sys, /proc and /dev (loop backing files, host paths)
 * are looked at under `hostRoot` (DiscoveryArgs.hostRoot), or not at all when it is undefined.
 */
export function hostDiscoveryDeps(
  run: Runner,
  files: { hostRoot?: string | undefined } = { hostRoot: "/" },
): DiscoveryDeps {
  const hostPath = (p: string): string | undefined =>
    KERNEL_FILESYSTEMS.some((prefix) => p.startsWith(prefix))
      ? p
      : files.hostRoot === undefined
        ? undefined
        : path.posix.join(files.hostRoot, p);
  return {
    run: (argv) => run(argv),
    readFile: (p) =>
      quick(
        p,
        () => fsSync.readFileSync(p, "utf8"),
        () => fs.readFile(p, "utf8"),
      ),
    readBytes: (p) =>
      quick(
        p,
        () => fsSync.readFileSync(p),
        () => fs.readFile(p),
      ),
    readdir: (p) =>
      quick(
        p,
        () => fsSync.readdirSync(p),
        () => fs.readdir(p),
      ),
    readlink: (p) =>
      quick(
        p,
        () => fsSync.readlinkSync(p),
        () => fs.readlink(p),
      ),
    stamp: (p) => {
      const at = hostPath(p);
      if (at === undefined) return Promise.resolve(undefined);
      return quick(
        at,
        () => fileStamp(fsSync.statSync(at, { bigint: true })),
        async () => fileStamp(await fs.stat(at, { bigint: true })),
      );
    },
  };
}

function fileStamp(s: fsSync.BigIntStats): FileStamp {
  return {
    type: s.isFile() ? "file" : s.isBlockDevice() ? "block-device" : "other",
    ino: String(s.ino),
    size: String(s.size),
    mtimeNs: String(s.mtimeNs),
    ctimeNs: String(s.ctimeNs),
  };
}

/**
 * sysfs, procfs and /dev are read synchronously: the kernel answers from memory (device attributes,
 * cached VPD pages, the mount table, device nodes and udev's links), so a read takes microseconds,
 * while each asynchronous read is four thread-pool round trips and promise bookkeeping: ~1,100 reads
 * for 64 devices took 100-200 ms that way on a loaded machine (issue 18). Any other path is read
 * asynchronously. Undefined when the file does not exist or cannot be read.
 */
function quick<T>(p: string, sync: () => T, async: () => Promise<T>): Promise<T | undefined> {
  if (!KERNEL_FILESYSTEMS.some((prefix) => p.startsWith(prefix))) return async().catch(() => undefined);
  try {
    return Promise.resolve(sync());
  } catch {
    return Promise.resolve(undefined);
  }
}

const KERNEL_FILESYSTEMS = ["/sys/", "/proc/", "/dev/"];

/**
 * A runner that starts only the reading commands discovery uses (lsblk, `blkid -p`, `wipefs --no-act`,
 * `lvm fullreport`) and refuses anything else before it reaches `run`: for tools that promise to
 * change nothing (`pulumi-lvm inventory`), whatever a bug upstream might ask for.
 */
export function readOnlyRunner(run: Runner): Runner {
  return (argv, options) => {
    const refusal = readOnlyRefusal(argv);
    return refusal ? Promise.reject(new CommandRefusedError(argv, refusal)) : run(argv, options);
  };
}

/** Why argv is not one of discovery's reading commands, or undefined when it is. */
export function readOnlyRefusal(argv: readonly string[]): string | undefined {
  const [tool, first] = argv;
  if (tool === "lsblk") return undefined;
  if (tool === "blkid" && first === "-p") return undefined;
  if (tool === "wipefs" && argv.includes("--no-act") && !argv.some((a) => /^(-a|--all|-f|--force)$/.test(a)))
    return undefined;
  if (tool === "lvm" && first === "fullreport") return undefined;
  // lvm's devices file: its two settings, and its entries (lvmdevices with no option only lists).
  if (same(argv, DEVICES_FILE_CONFIG_ARGV) || same(argv, LVMDEVICES_LIST_ARGV)) return undefined;
  return "only lsblk, blkid -p, wipefs --no-act, lvm fullreport, lvm lvmdevices (listing) and lvm config of the devices file may run here (reading only)";
}

function same(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((w, i) => w === b[i]);
}
