import { OWNER_TAG } from "../inventory/types";
import { lvmSize } from "./units";

/**
 * The exact commands a plan runs, as argv arrays for lvm2 2.03 and util-linux wipefs. Devices are
 * named by path ("/dev/sdb", "/dev/mapper/crypt-a"). No command carries --yes or -ff: the agent runs
 * them with stdin closed, so any prompt lvm would ask (a signature on a device, a volume group that
 * still holds logical volumes) is answered "no" and the command fails instead of destroying data.
 */

/** Erases every signature wipefs finds (destructive; only with forceWipeDevicesAndDestroyAllData). */
export function wipefsArgv(device: string): string[] {
  return ["wipefs", "--all", device];
}

export function pvcreateArgv(device: string): string[] {
  return ["pvcreate", device];
}

/** Creates the group with the owner tag, which is what makes it ours. */
export function vgcreateArgv(vg: string, devices: readonly string[]): string[] {
  return ["vgcreate", "--addtag", OWNER_TAG, vg, ...devices];
}

export function vgextendArgv(vg: string, device: string): string[] {
  return ["vgextend", vg, device];
}

/** Tags a physical volume (only possible once it is in a volume group: lvm keeps PV tags there). */
export function pvchangeAddTagArgv(tag: string, device: string): string[] {
  return ["pvchange", "--addtag", tag, device];
}

/**
 * Moves every allocated extent of `source` onto `destinations` (and nowhere else). `--interval 1`: lvm
 * checks progress every second instead of every 15 s, so the step ends when the move does.
 */
export function pvmoveArgv(source: string, destinations: readonly string[]): string[] {
  return ["pvmove", "--interval", "1", source, ...destinations];
}

export function vgreduceArgv(vg: string, device: string): string[] {
  return ["vgreduce", vg, device];
}

/**
 * Takes a group's missing physical volumes out of it. Without `force` lvm refuses while a logical
 * volume has data on one of them; with it, lvm removes those logical volumes too (their data is lost).
 */
export function vgreduceRemoveMissingArgv(vg: string, force: boolean): string[] {
  return ["vgreduce", "--removemissing", ...(force ? ["--force"] : []), vg];
}

export function pvremoveArgv(device: string): string[] {
  return ["pvremove", device];
}

/**
 * Lists a device in lvm's devices file (lvm 2.03.12+). lvm answers 0 when it is listed already. Run
 * through `lvm`: lvm2 packages do not all install the lvmdevices link (Debian 12's does not).
 */
export function lvmdevicesAddArgv(device: string): string[] {
  return ["lvm", "lvmdevices", "--adddev", device];
}

/** Removes a device from lvm's devices file; lvm fails ("No devices file entry") when it is not listed. */
export function lvmdevicesDelArgv(device: string): string[] {
  return ["lvm", "lvmdevices", "--deldev", device];
}

export interface ThinPoolCreate {
  readonly vg: string;
  readonly pool: string;
  /** An extent count, or an lvm percentage ("90%VG", "100%FREE"). */
  readonly extents: number | string;
  readonly chunkSizeBytes?: number;
  readonly metadataSizeBytes?: number;
}

/**
 * Creates a thin pool with the owner tag. `--zero y` zeroes newly provisioned blocks, so a volume never
 * reads data a deleted volume of another tenant left in a partly written chunk.
 */
export function lvcreateThinPoolArgv(p: ThinPoolCreate): string[] {
  return [
    "lvcreate",
    "--type",
    "thin-pool",
    "--name",
    p.pool,
    "--extents",
    String(p.extents),
    ...(p.chunkSizeBytes ? ["--chunksize", lvmSize(p.chunkSizeBytes)] : []),
    ...(p.metadataSizeBytes ? ["--poolmetadatasize", lvmSize(p.metadataSizeBytes)] : []),
    "--zero",
    "y",
    "--addtag",
    OWNER_TAG,
    p.vg,
  ];
}

/** Grows a thin pool's data to an extent count or an lvm percentage ("90%VG", "+100%FREE"). */
export function lvextendThinPoolArgv(vg: string, pool: string, extents: number | string): string[] {
  return ["lvextend", "--extents", String(extents), `${vg}/${pool}`];
}

/**
 * Grows a thin pool's metadata LV to `bytes` (absolute, a multiple of the extent size): lvm refuses a
 * size not larger than the current one ("not larger than existing size"), which the agent takes as done.
 */
export function lvextendThinPoolMetadataArgv(vg: string, pool: string, bytes: number): string[] {
  return ["lvextend", "--poolmetadatasize", `${bytes}b`, `${vg}/${pool}`];
}

/** Deactivates a logical volume; fails while it (or a thin volume in a pool) is open. */
export function lvchangeDeactivateArgv(vg: string, lv: string): string[] {
  return ["lvchange", "--activate", "n", `${vg}/${lv}`];
}

/** Removes an inactive logical volume; lvm asks (and so fails) if a thin pool still has volumes. */
export function lvremoveArgv(vg: string, lv: string): string[] {
  return ["lvremove", `${vg}/${lv}`];
}

/** Removes a volume group; with force, every logical volume in it too, without asking. */
export function vgremoveArgv(vg: string, force = false): string[] {
  return force ? ["vgremove", "--force", vg] : ["vgremove", vg];
}

/* ------------------------------------------------------------------------ reading back ---- */

/**
 * An lvm argv read back: the agent checks each step against the node's state from its argv (the
 * hashed truth it will execute, not the action's descriptive fields), and the simulator replays
 * plans from it. One reader for both, for every argv the builders above write.
 */
export interface ParsedArgv {
  /** argv[0]. @example "vgcreate" */
  readonly command: string;
  /** The words that are neither options nor their values, in order. @example ["vg-data", "/dev/vdb"] */
  readonly positionals: readonly string[];
  /** Option → its value (true for a flag), as written ("-n" and "--name" stay apart); the first wins. */
  readonly options: ReadonlyMap<string, string | true>;
}

/** Options of lvm tools (and wipefs) that take a value, so that value is not taken for a positional. */
const VALUE_OPTIONS = new Set([
  "--interval",
  "--addtag",
  "--deltag",
  "-s",
  "--physicalextentsize",
  "-l",
  "--extents",
  "-L",
  "--size",
  "-n",
  "--name",
  "--type",
  "-c",
  "--chunksize",
  "--poolmetadatasize",
  "--metadatasize",
  "--dataalignment",
  "-M",
  "--metadatatype",
  "--thinpool",
  "-Z",
  "--zero",
  "-a",
  "--activate",
  "--alloc",
  "--driverloaded",
  "-W",
  "--wipesignatures",
  "--reportformat",
  "--units",
  "-o",
  "--options",
  "--adddev",
  "--deldev",
]);

export function parseArgv(argv: readonly string[]): ParsedArgv {
  const positionals: string[] = [];
  const options = new Map<string, string | true>();
  const set = (name: string, value: string | true) => {
    if (!options.has(name)) options.set(name, value);
  };
  for (let i = 1; i < argv.length; i++) {
    const word = argv[i]!;
    if (!word.startsWith("-")) positionals.push(word);
    else if (word.startsWith("--") && word.includes("=")) {
      const at = word.indexOf("=");
      set(word.slice(0, at), word.slice(at + 1));
    } else if (VALUE_OPTIONS.has(word)) {
      // A value option at the end has no value: as absent as lvm would find it.
      if (i + 1 < argv.length) set(word, argv[i + 1]!);
      i++;
    } else set(word, true);
  }
  return { command: argv[0] ?? "", positionals, options };
}

/** The value of the first of `names` the argv gives a value (a flag has none). */
export function optionValue(parsed: ParsedArgv, ...names: string[]): string | undefined {
  for (const name of names) {
    const value = parsed.options.get(name);
    if (typeof value === "string") return value;
  }
  return undefined;
}
