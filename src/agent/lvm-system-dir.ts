import * as fs from "node:fs/promises";
import * as path from "node:path";
import { writeFileAtomic } from "./atomic-file";
import type { Runner } from "./lvm-runner";

/**
 * An LVM_SYSTEM_DIR for the agent's lvm commands that is the host's own configuration with one change:
 * `global/use_aio = 0`, lvm's synchronous I/O engine (docs/lvm-performance.md).
 *
 * Why: lvm 2.03 sets up a Linux AIO context for its label scan in every command and destroys it at the
 * command's end; io_destroy waits for an RCU grace period, 30-50 ms on a busy machine, which is most of
 * a small command's time (`lvm fullreport` of a few devices: ~50 ms with AIO, ~20 ms without). lvm
 * reads use_aio before it applies `--config`, so only a configuration file can change it, and lvm reads
 * its files from one directory. The copy keeps everything else as the host has it: lvm.conf verbatim
 * with the override appended (a later section's setting wins in lvm's parser), lvmlocal.conf verbatim,
 * and the metadata backup, archive and profile directories pinned to where the host's lvm puts them,
 * which would otherwise move into the copy.
 *
 * Synchronous I/O reads devices one at a time: on a node with many slow (rotating) disks the scan can
 * take longer than the AIO teardown it saves, so the agent uses this only when told to.
 */
export interface SyncIoSystemDirArgs {
  /** The host's LVM_SYSTEM_DIR. @default "/etc/lvm" */
  readonly from?: string;
  /** Where to write the copy (created if needed). */
  readonly to: string;
  /** Runs `lvm config` with LVM_SYSTEM_DIR = `from`, to learn the effective directories. */
  readonly run: Runner;
}

/** The settings the copy pins to their effective value on the host, as `section/key`. */
export const PINNED_SETTINGS = ["backup/backup_dir", "backup/archive_dir", "config/profile_dir"] as const;

export async function writeSyncIoSystemDir(args: SyncIoSystemDirArgs): Promise<void> {
  const from = args.from ?? "/etc/lvm";
  const base = (await readIfExists(path.join(from, "lvm.conf"))) ?? "";
  const local = await readIfExists(path.join(from, "lvmlocal.conf"));
  const { stdout } = await args.run(["lvm", "config", "--type", "full", ...PINNED_SETTINGS]);
  const effective = parseConfigLines(stdout);
  const value = (setting: string) => {
    const key = setting.split("/")[1]!;
    const v = effective.get(key);
    if (v === undefined)
      throw new Error(`lvm config --type full printed no ${setting} (got ${JSON.stringify(stdout)})`);
    return v;
  };
  const text = [
    base.endsWith("\n") || base === "" ? base : `${base}\n`,
    "# Appended by pulumi-lvm's agent (src/agent/lvm-system-dir.ts): the host's settings above, with",
    "# synchronous I/O, and the host's backup, archive and profile directories kept where they are.",
    "global {",
    "\tuse_aio = 0",
    "}",
    "backup {",
    `\tbackup_dir = ${value("backup/backup_dir")}`,
    `\tarchive_dir = ${value("backup/archive_dir")}`,
    "}",
    "config {",
    `\tprofile_dir = ${value("config/profile_dir")}`,
    "}",
    "",
  ].join("\n");
  await fs.mkdir(args.to, { recursive: true, mode: 0o755 });
  writeFileAtomic(path.join(args.to, "lvm.conf"), text);
  if (local !== undefined) writeFileAtomic(path.join(args.to, "lvmlocal.conf"), local);
  else await fs.rm(path.join(args.to, "lvmlocal.conf"), { force: true });
}

/** `key="value"` lines of `lvm config` → key → the value as lvm printed it (quoted), for writing back. */
export function parseConfigLines(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const line of text.split("\n")) {
    const m = /^\s*([A-Za-z_]+)\s*=\s*(".*")\s*$/.exec(line);
    if (m) out.set(m[1]!, m[2]!);
  }
  return out;
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
