/**
 * Loop devices of a test's own (backing files under /var/tmp/agent-tests/) and lvm run by the test
 * itself, restricted to its own devices by a filter, independent of the agent. Other engineers
 * create loop devices and volume groups on the same machine: everything here touches only the
 * devices it created, and cleanup() removes exactly those.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { AgentOptions } from "./agent-process";

export const ROOT = "/var/tmp/agent-tests";
const LVM_ENV = { ...process.env, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };

/** Fails loudly (never skips) when this machine cannot run the host tier. */
export function requireHostTier(): void {
  const missing = ["losetup", "lvm", "wipefs", "lsblk", "setpriv"].filter((t) => {
    try {
      execFileSync("sh", ["-c", `command -v ${t}`], { stdio: "ignore" });
      return false;
    } catch {
      return true;
    }
  });
  if (process.getuid?.() !== 0) missing.push("(root)");
  if (missing.length)
    throw new Error(`the agent's host tier needs root and ${missing.join(", ")}: run test/setup.sh as root`);
}

/** A scratch directory and the loop devices of one test file. */
export class Scratch {
  readonly dir: string;
  readonly loops: string[] = [];

  /** `root`: where the backing files go (another tier's tests keep theirs apart). @default ROOT */
  constructor(name: string, root: string = ROOT) {
    fs.mkdirSync(root, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(root, `${name}-`));
  }

  /** Creates a loop device over a new sparse file of `mib` MiB and returns its path. */
  loop(mib = 128): string {
    const file = path.join(this.dir, `disk${this.loops.length}.img`);
    fs.writeFileSync(file, "");
    fs.truncateSync(file, mib * 1024 * 1024);
    const dev = execFileSync("losetup", ["--find", "--show", file], { encoding: "utf8" }).trim();
    this.loops.push(dev);
    return dev;
  }

  path(name: string): string {
    return path.join(this.dir, name);
  }

  /**
   * Where an agent started on this scratch keeps its journal, lvmd.yaml and command log; with
   * `node`, files of that node's own (`<node>-state`, ...), for several agents on one scratch.
   */
  agentFiles(node?: string): Pick<AgentOptions, "stateDir" | "lvmdConfig" | "commandLog"> {
    const file = (name: string) => this.path(node ? `${node}-${name}` : name);
    return { stateDir: file("state"), lvmdConfig: file("lvmd.yaml"), commandLog: file("commands.jsonl") };
  }

  /** Removes our volume groups, PV labels and loop devices, and the scratch directory. */
  cleanup(): void {
    if (this.loops.length) {
      for (const vg of vgNames(this.loops)) lvm(this.loops, ["vgremove", "--force", vg], true);
      for (const pv of pvs(this.loops))
        lvm(this.loops, ["pvremove", "--force", "--force", "--yes", pv.pv_name], true);
      for (const dev of this.loops) {
        try {
          execFileSync("losetup", ["--detach", dev], { stdio: "ignore" });
        } catch {
          /* already detached */
        }
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The lvm filter that makes lvm see exactly `devices`. */
export function filterConfig(devices: readonly string[]): string {
  const list = `[${[...devices.map((d) => `"a|^${d}$|"`), '"r|.*|"'].join(",")}]`;
  return `devices { use_devicesfile=0 filter=${list} global_filter=${list} }`;
}

/** Runs an lvm tool as the test (not through the agent), seeing only `devices`. */
export function lvm(devices: readonly string[], argv: readonly string[], ignoreFailure = false): string {
  const [tool, ...rest] = argv;
  try {
    return execFileSync(tool!, ["--config", filterConfig(devices), ...rest], {
      env: LVM_ENV,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    if (ignoreFailure) return "";
    throw e;
  }
}

export interface PvRow {
  pv_name: string;
  vg_name: string;
  pv_uuid: string;
  pv_tags: string;
}
export interface VgRow {
  vg_name: string;
  pv_count: string;
  vg_tags: string;
  vg_size: string;
}

/** `pvs` as the test sees it. */
export function pvs(devices: readonly string[]): PvRow[] {
  const out = lvm(devices, [
    "pvs",
    "--reportformat",
    "json",
    "--units",
    "b",
    "--nosuffix",
    "-o",
    "pv_name,vg_name,pv_uuid,pv_tags",
  ]);
  return JSON.parse(out).report[0].pv;
}

/** `vgs` as the test sees it. */
export function vgs(devices: readonly string[]): VgRow[] {
  const out = lvm(devices, [
    "vgs",
    "--reportformat",
    "json",
    "--units",
    "b",
    "--nosuffix",
    "-o",
    "vg_name,pv_count,vg_tags,vg_size",
  ]);
  return JSON.parse(out).report[0].vg;
}

function vgNames(devices: readonly string[]): string[] {
  try {
    return vgs(devices).map((v) => v.vg_name);
  } catch {
    return [];
  }
}

/** The members of a volume group, sorted. */
export function membersOf(devices: readonly string[], vg: string): string[] {
  return pvs(devices)
    .filter((p) => p.vg_name === vg)
    .map((p) => p.pv_name)
    .sort();
}
