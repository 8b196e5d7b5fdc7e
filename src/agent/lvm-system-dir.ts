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
 * its files from one directory. The copy keeps everything else as the host has it: lvm.conf verbatim,
 * lvmlocal.conf verbatim with the override appended (lvm reads lvmlocal.conf over lvm.conf, so its
 * settings win), and the metadata backup, archive and profile directories pinned to where the host's
 * lvm puts them, which would otherwise move into the copy, and `devices/` a link to the host's (lvm's
 * devices file lives there). Appended to lvmlocal.conf, not lvm.conf:
 * a setting that appears twice in one file makes every lvm command print "WARNING: Ignoring
 * duplicate config value" on stderr, and hosts set these in lvm.conf, not in lvmlocal.conf.
 *
 * Synchronous I/O reads devices one at a time: on a node with many slow (rotating) disks the scan can
 * take longer than the AIO teardown it saves, so the agent uses this only when told to.
 *
 * `from` and `to` are paths as lvm sees them. When lvm runs through a command prefix into the host's
 * mount namespace (nsenter, in a pod), this process reaches them under `hostRoot` (/proc/1/root). Either
 * way, when `runWithCopy` is given, lvm itself is asked afterwards what it reads from the copy, in the
 * namespace it runs in: the host's configuration tree with exactly use_aio and the three pinned
 * directories changed, or the copy is refused (its path may not be where lvm looks, or be another file).
 */
export interface SyncIoSystemDirArgs {
  /** The host's LVM_SYSTEM_DIR. @default "/etc/lvm" */
  readonly from?: string;
  /** Where to write the copy (created if needed). */
  readonly to: string;
  /** Runs `lvm config` with LVM_SYSTEM_DIR = `from`, to learn the effective directories. */
  readonly run: Runner;
  /** Runs `lvm config` with LVM_SYSTEM_DIR = `to`, through the same prefix: checks the copy as lvm reads it. */
  readonly runWithCopy?: Runner;
  /**
   * Where the filesystem lvm runs in is visible to this process: `from` is read and `to` written under
   * it. @default "" (the same filesystem)
   * @example "/proc/1/root"
   */
  readonly hostRoot?: string;
  /**
   * More settings for this copy, as `section/key` → value as `lvm config` prints it (the lvm shell's
   * copy: LVM_SHELL_SETTINGS); appended with the others and checked like them. @default none
   */
  readonly extraSettings?: ReadonlyMap<string, string>;
}

/** The settings the copy pins to their effective value on the host, as `section/key`. */
export const PINNED_SETTINGS = ["backup/backup_dir", "backup/archive_dir", "config/profile_dir"] as const;

export async function writeSyncIoSystemDir(args: SyncIoSystemDirArgs): Promise<void> {
  const from = args.from ?? "/etc/lvm";
  const here = (p: string) => (args.hostRoot ? path.join(args.hostRoot, p) : p);
  const base = (await readIfExists(path.join(here(from), "lvm.conf"))) ?? "";
  const local = await readIfExists(path.join(here(from), "lvmlocal.conf"));
  const { stdout } = await args.run(["lvm", "config", "--type", "full", ...PINNED_SETTINGS]);
  const effective = parseConfigLines(stdout);
  const value = (setting: string) => {
    const key = setting.split("/")[1]!;
    const v = effective.get(key);
    if (v === undefined)
      throw new Error(`lvm config --type full printed no ${setting} (got ${JSON.stringify(stdout)})`);
    return v;
  };
  const overrides = [
    local === undefined || local === "" || local.endsWith("\n") ? (local ?? "") : `${local}\n`,
    "# Appended by pulumi-lvm's agent (src/agent/lvm-system-dir.ts): the host's settings, with",
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
    ...sectionsOf(args.extraSettings ?? new Map()),
    "",
  ].join("\n");
  const to = here(args.to);
  await fs.mkdir(to, { recursive: true, mode: 0o755 });
  writeFileAtomic(path.join(to, "lvm.conf"), base);
  writeFileAtomic(path.join(to, "lvmlocal.conf"), overrides);
  await linkDevicesDir(to, path.join(from, "devices"));
  if (args.runWithCopy) {
    const pinned = new Map(PINNED_SETTINGS.map((s) => [s, value(s)]));
    const changed = new Map([["global/use_aio", "0"], ...pinned, ...(args.extraSettings ?? [])]);
    await checkCopy(args.run, args.runWithCopy, args.to, changed);
  }
}

/**
 * `<copy>/devices` → the host's `<from>/devices` (a path as lvm sees it): lvm keeps its devices file
 * (devices/devicesfile, /etc/lvm/devices/system.devices) under LVM_SYSTEM_DIR, so without the link the
 * agent's `lvm lvmdevices` would read and write a file in the copy the host's lvm never reads.
 */
async function linkDevicesDir(copy: string, hostDevices: string): Promise<void> {
  const link = path.join(copy, "devices");
  const now = await fs.readlink(link).catch(() => undefined);
  if (now === hostDevices) return;
  await fs.rm(link, { recursive: true, force: true });
  await fs.symlink(hostDevices, link);
}

/** "section/key" → value as lvm.conf lines, one block per section. */
function sectionsOf(settings: ReadonlyMap<string, string>): string[] {
  const bySection = new Map<string, string[]>();
  for (const [setting, v] of settings) {
    const [section, key] = setting.split("/");
    bySection.set(section!, [...(bySection.get(section!) ?? []), `\t${key} = ${v}`]);
  }
  return [...bySection].flatMap(([section, lines]) => [`${section} {`, ...lines, "}"]);
}

/** `lvm config` of the whole configuration lvm runs with (its files and the runner's --config, merged). */
const CURRENT_CONFIG = ["lvm", "config", "--type", "current", "--mergedconfig"];

/**
 * Asks lvm what it reads with LVM_SYSTEM_DIR = the copy, and with the host's: the two must be the same
 * settings but for `changed`, which must have exactly those values. Throws naming the settings that differ.
 */
async function checkCopy(
  run: Runner,
  runWithCopy: Runner,
  to: string,
  changed: ReadonlyMap<string, string>,
): Promise<void> {
  const expected = parseConfigTree((await run(CURRENT_CONFIG)).stdout);
  for (const [setting, v] of changed) expected.set(setting, v);
  let seen: Map<string, string>;
  try {
    seen = parseConfigTree((await runWithCopy(CURRENT_CONFIG)).stdout);
  } catch (e) {
    throw new Error(`lvm cannot read the copy at ${to} where it runs: ${(e as Error).message}`);
  }
  const differ = [...new Set([...expected.keys(), ...seen.keys()])]
    .filter((k) => expected.get(k) !== seen.get(k))
    .sort();
  if (differ.length)
    throw new Error(
      `lvm, where it runs, reads another configuration from ${to} than the copy of the host's: ${differ
        .slice(0, 5)
        .map((k) => `${k} is ${seen.get(k) ?? "unset"}, not ${expected.get(k) ?? "unset"}`)
        .join("; ")}${differ.length > 5 ? ` (and ${differ.length - 5} more)` : ""}`,
    );
}

/** `lvm config` output (sections in braces, one `key=value` a line) → "section/key" → the value as printed. */
export function parseConfigTree(text: string): Map<string, string> {
  const out = new Map<string, string>();
  const sections: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const open = /^([A-Za-z0-9_@.-]+)\s*\{$/.exec(line);
    if (open) sections.push(open[1]!);
    else if (line === "}") sections.pop();
    else {
      const m = /^([A-Za-z0-9_]+)\s*=\s*(.*)$/.exec(line);
      if (m) out.set([...sections, m[1]!].join("/"), m[2]!);
    }
  }
  return out;
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
