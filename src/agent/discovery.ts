import * as fsSync from "node:fs";
import * as fs from "node:fs/promises";
import { discoverNode, type DiscoveryDeps } from "../inventory/discover";
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
}

/** This node's inventory, fresh each call: src/inventory's discovery through the agent's runner, parsed. */
export function createDiscovery(args: DiscoveryArgs): () => Promise<NodeInventory> {
  const deps = hostDiscoveryDeps(args.run);
  return async () =>
    parseNodeInventory(
      await discoverNode(deps, {
        node: args.node,
        ...(args.devices ? { devices: args.devices } : {}),
        ...(args.mountinfo ? { mountinfo: args.mountinfo } : {}),
      }),
    );
}

/** Discovery's commands go through `run`; its file, directory and link reads go to this machine. */
export function hostDiscoveryDeps(run: Runner): DiscoveryDeps {
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
  return "only lsblk, blkid -p, wipefs --no-act and lvm fullreport may run here (reading only)";
}
