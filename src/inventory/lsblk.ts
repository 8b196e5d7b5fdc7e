import { z } from "zod";
import { compareNatural, devPath } from "./device-path";
import { arrayUnder, compact, optionalFlag, optionalText, parseRaw, wholeNumber } from "./raw-shape";

/**
 * `lsblk --json --bytes --output-all` (with or without `--paths`) flattened into one entry per device.
 *
 * lsblk prints a tree: partitions under their disk, device-mapper devices under every device they sit on,
 * so an LV spanning two PVs is printed twice. Entries are merged by kname; `parents`/`children` keep the
 * tree's edges. Older lsblk prints every value as a string ("size": "2147483648", "ro": "0") and a single
 * "mountpoint" instead of the "mountpoints" array (util-linux 2.37+); both forms are accepted.
 * Without udev lsblk leaves fstype, serial, partlabel, parttype and wwn empty: see sysfs.ts and blkid.ts.
 */
export interface LsblkDevice {
  /** "/dev/loop3", "/dev/dm-0" */
  readonly kname: string;
  /** lsblk PATH, else NAME as a path: "/dev/mapper/<name>" for device-mapper devices. */
  readonly path: string;
  readonly type: string;
  readonly size: number;
  /** "7:3" */
  readonly majMin?: string;
  readonly serial?: string;
  /** Lowercase. */
  readonly wwn?: string;
  readonly model?: string;
  readonly vendor?: string;
  readonly rotational?: boolean;
  readonly readOnly?: boolean;
  readonly removable?: boolean;
  readonly partlabel?: string;
  readonly parttype?: string;
  readonly fstype?: string;
  /** Mount points lsblk shows, including "[SWAP]". */
  readonly mountpoints: readonly string[];
  /** knames of the devices this one sits on (the enclosing entries in the tree, and PKNAME). */
  readonly parents: readonly string[];
  /** knames of the devices printed under this one. */
  readonly children: readonly string[];
}

/** The lsblk argv discovery runs: every device, or only `devices` (and what sits on them). */
export function lsblkArgv(devices?: readonly string[]): string[] {
  return ["lsblk", "--json", "--bytes", "--output-all", "--paths", ...(devices ?? [])];
}

/** Parses lsblk's JSON; throws a RawShapeError naming the wrong field. Devices come back sorted by kname. */
export function parseLsblk(json: unknown): LsblkDevice[] {
  const top = arrayUnder(json, "blockdevices", '{"blockdevices": [...]}');
  const byKname = new Map<string, Builder>();
  top.forEach((entry, i) => visit(entry, ["blockdevices", i], undefined, byKname));
  return [...byKname.values()].map(finish).sort((a, b) => compareNatural(a.kname, b.kname));
}

/** lsblk TYPEs that are device-mapper devices, named /dev/mapper/<name>. */
const DM_TYPES = new Set(["lvm", "crypt", "dm", "mpath", "multipath"]);

interface RawNode {
  name: string;
  kname: string;
  path?: string;
  type: string;
  size: number;
  "maj:min"?: string;
  pkname?: string;
  serial?: string;
  wwn?: string;
  model?: string;
  vendor?: string;
  partlabel?: string;
  parttype?: string;
  fstype?: string;
  ro?: boolean;
  rm?: boolean;
  rota?: boolean;
  mountpoint?: string;
  mountpoints?: (string | null)[];
  children?: unknown[];
}

const rawNode: z.ZodType<RawNode, unknown> = z.object({
  name: z.string().min(1),
  kname: z.string().min(1),
  path: optionalText,
  type: z.string().min(1),
  size: wholeNumber,
  "maj:min": optionalText,
  pkname: optionalText,
  serial: optionalText,
  wwn: optionalText,
  model: optionalText,
  vendor: optionalText,
  partlabel: optionalText,
  parttype: optionalText,
  fstype: optionalText,
  ro: optionalFlag,
  rm: optionalFlag,
  rota: optionalFlag,
  mountpoint: optionalText,
  mountpoints: z.array(z.union([z.string(), z.null()])).optional(),
  children: z.array(z.unknown()).optional(),
});

interface Builder {
  device: Omit<LsblkDevice, "parents" | "children" | "mountpoints">;
  mountpoints: Set<string>;
  parents: Set<string>;
  children: Set<string>;
}

function visit(
  entry: unknown,
  at: readonly PropertyKey[],
  parent: string | undefined,
  out: Map<string, Builder>,
): string {
  const raw = parseRaw(rawNode, entry, "an lsblk device object", at);
  const kname = devPath(raw.kname);
  let b = out.get(kname);
  if (!b) {
    b = { device: deviceOf(raw, kname), mountpoints: new Set(), parents: new Set(), children: new Set() };
    out.set(kname, b);
  }
  for (const m of [raw.mountpoint, ...(raw.mountpoints ?? [])]) if (m) b.mountpoints.add(m);
  if (parent) b.parents.add(parent);
  if (raw.pkname) b.parents.add(devPath(raw.pkname));
  raw.children?.forEach((child, i) => b.children.add(visit(child, [...at, "children", i], kname, out)));
  return kname;
}

function deviceOf(raw: RawNode, kname: string): Builder["device"] {
  return {
    kname,
    path: raw.path ? devPath(raw.path) : pathFromName(raw.name, raw.type),
    type: raw.type,
    size: raw.size,
    majMin: raw["maj:min"],
    serial: raw.serial,
    wwn: raw.wwn?.toLowerCase(),
    model: raw.model,
    vendor: raw.vendor,
    rotational: raw.rota,
    readOnly: raw.ro,
    removable: raw.rm,
    partlabel: raw.partlabel,
    parttype: raw.parttype,
    fstype: raw.fstype,
  };
}

function pathFromName(name: string, type: string): string {
  if (name.startsWith("/")) return devPath(name);
  return DM_TYPES.has(type) ? `/dev/mapper/${name}` : devPath(name);
}

function finish(b: Builder): LsblkDevice {
  return {
    ...compact(b.device),
    mountpoints: [...b.mountpoints].sort(),
    parents: [...b.parents].sort(compareNatural),
    children: [...b.children].sort(compareNatural),
  };
}
