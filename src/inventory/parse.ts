import { z } from "zod";
import { blkidFacts, type BlkidFacts } from "./blkid";
import { compareNatural, devPath, linkTarget } from "./device-path";
import { parseLsblk, type LsblkDevice } from "./lsblk";
import { parseDevicesFile } from "./devices-file";
import { parseLvmReport, type LvmReport } from "./lvm-report";
import { parseMounts, parseSwaps } from "./mounts";
import { formatPath } from "../api/errors";
import { compact, firstProblem, RawShapeError } from "./raw-shape";
import { parseSysfs, type SysfsFacts } from "./sysfs";
import type { BlockDevice, NodeInventory, RawNodeInventory, Signature, UnresolvedMount } from "./types";
import { compareSignatures, parseWipefsSignatures } from "./wipefs";

/**
 * A node's raw tool output (RawNodeInventory) combined into the NodeInventory the planner trusts.
 *
 * lsblk decides which devices exist. Onto each device go: the signatures wipefs (and blkid) found on
 * it — never lsblk's FSTYPE, which is empty without udev; serial, wwn, model, read-only, removable and
 * rotational from sysfs where lsblk has none; the udev/device-mapper links pointing at it; every mount
 * point from lsblk, mountinfo and /proc/swaps ("[SWAP]"); parent/children from lsblk's tree and the
 * holders/ directories; dm suspension and the loop backing file from sysfs. Tool output naming a device
 * lsblk does not list is ignored. Devices, PVs, VGs and LVs come out sorted, so the order the tools
 * printed things in does not change the result.
 */

/** Thrown for raw input of the wrong shape: names the node, the part of the raw inventory and the field. */
export class InventoryParseError extends Error {
  constructor(
    readonly node: string,
    readonly part: string,
    readonly detail: string,
  ) {
    super(`node ${JSON.stringify(node)}: ${part}: ${detail}`);
    this.name = "InventoryParseError";
  }
}

export function parseNodeInventory(raw: RawNodeInventory): NodeInventory {
  const r = validateTop(raw);
  const node = r.name;
  const part = <T>(name: string, parse: () => T): T => {
    try {
      return parse();
    } catch (err) {
      if (err instanceof InventoryParseError) throw err;
      throw new InventoryParseError(node, name, (err as Error).message);
    }
  };

  const lsblk = part("lsblk", () => parseLsblk(r.lsblk));
  const index = new DeviceIndex(lsblk);
  const lvm: LvmReport =
    r.lvm === null ? { pvs: [], vgs: [], lvs: [] } : part("lvm", () => parseLvmReport(r.lvm));

  const signatures = keyed(
    index,
    part("signatures", () => parseWipefsSignatures(r.signatures ?? [])),
    mergeSignatures,
  );
  const blkid = keyed(
    index,
    part("blkid", () => mapValues(r.blkid ?? {}, blkidFacts)),
  );
  const sysfs = keyed(
    index,
    part("sysfs", () =>
      mapValues(r.sysfs ?? {}, (attrs, kname) => withPrefix(kname, () => parseSysfs(attrs))),
    ),
  );
  for (const [kname, facts] of sysfs) if (facts.majMin) index.addMajMin(facts.majMin, kname);
  const probed = new Set((r.probed ?? []).map((d) => index.resolve(d)).filter((k) => k !== undefined));
  const probeErrors = keyed(index, new Map(Object.entries(r.probeErrors ?? {})));

  const symlinks = new Multi();
  for (const [link, target] of Object.entries(r.links ?? {})) {
    const kname = index.resolve(linkTarget(link, target));
    if (!kname) continue;
    symlinks.add(kname, link);
    index.alias(link, kname);
  }

  const mountpoints = new Multi();
  const unresolvedRoots: UnresolvedMount[] = [];
  let rootResolved = lsblk.some((d) => d.mountpoints.includes("/"));
  for (const m of part("mounts", () => parseMounts(r.mounts ?? ""))) {
    const kname = (m.majMin && index.byMajMin(m.majMin)) || index.resolve(m.source);
    if (kname) mountpoints.add(kname, m.mountpoint);
    if (m.mountpoint !== "/") continue;
    if (kname) rootResolved = true;
    // Only a device source can hide a disk: overlay, tmpfs, rootfs, nfs... name none.
    else if (m.source.startsWith("/dev/"))
      unresolvedRoots.push(compact({ source: m.source, fstype: m.fstype, majMin: m.majMin }));
  }
  const unresolvedRootMount = rootResolved ? undefined : unresolvedRoots[0];
  for (const file of part("swaps", () => parseSwaps(r.swaps ?? ""))) {
    const kname = index.resolve(file);
    if (kname) mountpoints.add(kname, "[SWAP]");
  }

  const childrenOf = new Multi();
  for (const d of lsblk) {
    for (const c of d.children) childrenOf.add(d.kname, c);
    for (const p of d.parents) childrenOf.add(p, d.kname);
  }
  for (const [kname, facts] of sysfs)
    for (const h of facts.holders) if (index.has(h)) childrenOf.add(kname, h);

  const devices = lsblk.map((d) =>
    device(d, {
      sysfs: sysfs.get(d.kname),
      blkid: blkid.get(d.kname),
      signatures: signatures.get(d.kname) ?? [],
      symlinks: symlinks.get(d.kname),
      mountpoints: [...d.mountpoints, ...mountpoints.get(d.kname)],
      children: childrenOf.get(d.kname),
      probed: probed.has(d.kname) && !probeErrors.has(d.kname),
      probeError: probeErrors.get(d.kname),
    }),
  );
  return {
    node,
    labels: r.labels ?? {},
    devices: devices.sort((a, b) => compareNatural(a.kname, b.kname)),
    pvs: lvm.pvs,
    vgs: lvm.vgs,
    lvs: lvm.lvs,
    ...(unresolvedRootMount ? { unresolvedRootMount } : {}),
    ...(r.missingDevices?.length ? { missingDevices: [...r.missingDevices].sort(compareNatural) } : {}),
    ...(r.devicesFile ? { devicesFile: part("devicesFile", () => parseDevicesFile(r.devicesFile!)) } : {}),
  };
}

interface Extra {
  sysfs?: SysfsFacts;
  blkid?: BlkidFacts;
  signatures: Signature[];
  symlinks: readonly string[];
  mountpoints: readonly string[];
  children: readonly string[];
  probed: boolean;
  probeError?: string;
}

function device(d: LsblkDevice, x: Extra): BlockDevice {
  const s = x.sysfs;
  return compact({
    kname: d.kname,
    path: d.path,
    type: d.type,
    size: d.size,
    symlinks: unique(x.symlinks),
    serial: d.serial ?? s?.serial,
    wwn: d.wwn ?? s?.wwn,
    model: d.model ?? s?.model,
    vendor: d.vendor ?? s?.vendor,
    rotational: d.rotational ?? s?.rotational,
    readOnly: d.readOnly ?? s?.readOnly ?? false,
    removable: d.removable ?? s?.removable ?? false,
    partlabel: d.partlabel ?? x.blkid?.partlabel,
    parttype: d.parttype ?? x.blkid?.parttype,
    fstype: d.fstype ?? x.blkid?.type,
    mountpoints: unique(x.mountpoints),
    parent: d.parents[0],
    children: unique(x.children),
    suspended: s?.suspended ?? false,
    backingFile: s?.backingFile,
    signatures: withBlkid(x.signatures, x.blkid),
    probed: x.probed,
    probeError: x.probeError,
  });
}

/**
 * wipefs lists every signature; blkid reports the one it would mount. A blkid TYPE that wipefs did not
 * list (blkid ran, wipefs did not) is added, so a device is never emptier than any probe saw it.
 */
function withBlkid(signatures: Signature[], blkid: BlkidFacts | undefined): Signature[] {
  if (!blkid?.type || signatures.some((s) => s.type === blkid.type)) return signatures;
  const fromBlkid: Signature = compact({
    type: blkid.type,
    uuid: blkid.uuid,
    label: blkid.label,
    usage: blkid.usage,
  });
  return [...signatures, fromBlkid].sort(compareSignatures);
}

/** Looks devices up by any name the tools use for them: kname, path, bare name, link, major:minor. */
class DeviceIndex {
  private readonly names = new Map<string, string>();
  private readonly majMins = new Map<string, string>();

  constructor(devices: readonly LsblkDevice[]) {
    for (const d of devices) {
      this.names.set(d.kname, d.kname);
      this.names.set(d.path, d.kname);
      if (d.majMin) this.majMins.set(d.majMin, d.kname);
    }
  }

  has(kname: string): boolean {
    return this.names.get(kname) === kname;
  }

  alias(name: string, kname: string): void {
    if (!this.names.has(name)) this.names.set(name, kname);
  }

  addMajMin(majMin: string, kname: string): void {
    if (!this.majMins.has(majMin)) this.majMins.set(majMin, kname);
  }

  byMajMin(majMin: string): string | undefined {
    return this.majMins.get(majMin);
  }

  /** "/dev/loop3", "loop3", "mapper/vg-lv", "vg-lv" (a dm name) → the kname, if the device is listed. */
  resolve(name: string): string | undefined {
    return (
      this.names.get(devPath(name)) ??
      (name.startsWith("/") ? undefined : this.names.get(`/dev/mapper/${name}`))
    );
  }
}

/**
 * A map keyed by device name turned into one keyed by kname; names of unlisted devices are dropped.
 * Two names of one device ("loop3" and "/dev/loop3") are merged, or the first is kept.
 */
function keyed<V>(
  index: DeviceIndex,
  byName: ReadonlyMap<string, V>,
  merge: (a: V, b: V) => V = (a) => a,
): Map<string, V> {
  const out = new Map<string, V>();
  for (const [name, value] of byName) {
    const kname = index.resolve(name);
    if (!kname) continue;
    const seen = out.get(kname);
    out.set(kname, seen === undefined ? value : merge(seen, value));
  }
  return out;
}

function mergeSignatures(a: Signature[], b: Signature[]): Signature[] {
  const all = [...a, ...b].sort(compareSignatures);
  return all.filter((s, i) => i === 0 || JSON.stringify(s) !== JSON.stringify(all[i - 1]));
}

/** kname → list, each list kept unique. */
class Multi {
  private readonly map = new Map<string, Set<string>>();
  add(key: string, value: string): void {
    let set = this.map.get(key);
    if (!set) this.map.set(key, (set = new Set()));
    set.add(value);
  }
  get(key: string): string[] {
    return [...(this.map.get(key) ?? [])];
  }
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)].sort(compareNatural);
}

function mapValues<V, W>(record: Readonly<Record<string, V>>, f: (v: V, key: string) => W): Map<string, W> {
  return new Map(Object.entries(record).map(([k, v]) => [k, f(v, k)]));
}

function withPrefix<T>(key: string, f: () => T): T {
  try {
    return f();
  } catch (err) {
    throw new RawShapeError(key, (err as Error).message);
  }
}

const rawInventory = z.object({
  name: z.string().min(1),
  labels: z.record(z.string(), z.string()).optional(),
  lsblk: z.unknown(),
  lvm: z.unknown(),
  signatures: z.array(z.unknown()).optional(),
  probed: z.array(z.string()).optional(),
  probeErrors: z.record(z.string(), z.string()).optional(),
  missingDevices: z.array(z.string()).optional(),
  blkid: z.record(z.string(), z.string()).optional(),
  sysfs: z.record(z.string(), z.record(z.string(), z.string())).optional(),
  links: z.record(z.string(), z.string()).optional(),
  mounts: z.string().optional(),
  swaps: z.string().optional(),
  devicesFile: z.object({ config: z.string(), list: z.string().nullable() }).optional(),
});

/** The top-level shape; a field of the wrong kind is reported as that part of the named node. */
function validateTop(raw: unknown): z.output<typeof rawInventory> {
  const name = typeof raw === "object" && raw !== null ? (raw as { name?: unknown }).name : undefined;
  const node = typeof name === "string" && name !== "" ? name : "(unnamed)";
  const result = rawInventory.safeParse(raw, { reportInput: true });
  if (result.success) return result.data;
  const { path, message } = firstProblem(result.error);
  if (path.length === 0)
    throw new InventoryParseError(
      node,
      "inventory",
      "expected a raw node inventory object ({name, lsblk, lvm, ...})",
    );
  const [field, ...rest] = path;
  throw new InventoryParseError(
    node,
    String(field),
    rest.length ? `${formatPath(rest)}: ${message}` : message,
  );
}
