import type {
  BlockDevice,
  LogicalVolume,
  NodeInventory,
  PhysicalVolume,
  VolumeGroupInfo,
} from "../inventory/types";
import type { DevicesFile, DevicesFileEntry } from "../inventory/devices-file";
import { optionValue, parseArgv, type ParsedArgv } from "./argv";
import { thinPoolOf } from "./missing-devices";
import { estimateThinMetadataBytes, percentOfExtents } from "./thin";
import type { NodePlan, PlanAction } from "./types";
import { DEFAULT_EXTENT_SIZE, estimatedPvExtents } from "./volume-group";

/**
 * What a plan's commands do to a node, as lvm2 would do it, on an inventory: a model for tests and dry
 * runs (the real check is running the argv on loop devices and in a VM). It follows lvm's rules where
 * the planner relies on them — extents per new PV, %VG rounding, 100%FREE setting aside metadata and
 * spare, PV tags living in VG metadata — and throws where lvm would refuse or prompt: pvcreate on a
 * device with a signature, not enough free extents, a volume group that still holds volumes.
 */
export function applyPlanEffects(inventory: NodeInventory, plan: Pick<NodePlan, "actions">): NodeInventory {
  const s = new State(inventory);
  for (const action of plan.actions) s.apply(action);
  return s.result();
}

/** Thrown when lvm would refuse a command of the plan (or prompt, and so fail with stdin closed). */
export class SimulationError extends Error {
  constructor(action: PlanAction, message: string) {
    super(`${action.argv.join(" ") || action.op}: ${message}`);
    this.name = "SimulationError";
  }
}

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

class State {
  private devices: Mutable<BlockDevice>[];
  private pvs: Mutable<PhysicalVolume>[];
  private vgs: Mutable<VolumeGroupInfo>[];
  private lvs: Mutable<LogicalVolume>[];
  private uuid = 0;
  private devicesFile: DevicesFile | undefined;

  constructor(private readonly inventory: NodeInventory) {
    this.devices = inventory.devices.map((d) => ({ ...d }));
    this.pvs = inventory.pvs.map((pv) => ({ ...pv }));
    this.vgs = inventory.vgs.map((vg) => ({ ...vg }));
    this.lvs = inventory.lvs.map((lv) => ({ ...lv }));
    this.devicesFile = inventory.devicesFile;
  }

  result(): NodeInventory {
    return {
      ...this.inventory,
      devices: this.devices,
      pvs: this.pvs,
      vgs: this.vgs,
      lvs: this.lvs,
      ...(this.devicesFile ? { devicesFile: this.devicesFile } : {}),
    };
  }

  apply(a: PlanAction): void {
    const fail = (message: string): never => {
      throw new SimulationError(a, message);
    };
    const argv = parseArgv(a.argv);
    const [first, second] = argv.positionals;
    switch (a.op) {
      case "wipefs": {
        const d = this.device(first!, fail);
        if (this.pvOn(d)?.vgName) fail(`${d.path} is a physical volume of ${this.pvOn(d)!.vgName}`);
        d.signatures = [];
        this.pvs = this.pvs.filter((pv) => pv !== this.pvOn(d));
        return;
      }
      case "pvcreate": {
        const d = this.device(first!, fail);
        if (d.signatures.length)
          fail(`${d.path} has signatures ${d.signatures.map((x) => x.type).join(", ")}: pvcreate would ask`);
        if (this.pvOn(d)) fail(`${d.path} is already a physical volume`);
        d.signatures = [{ type: "LVM2_member", offset: "0x218", usage: "raid" }];
        this.pvs.push({
          device: d.path,
          uuid: `sim-pv-${++this.uuid}`,
          vgName: "",
          size: d.size,
          free: d.size,
          tags: [],
        });
        return;
      }
      case "vgcreate": {
        const tag = optionValue(argv, "--addtag");
        const [name, ...paths] = argv.positionals;
        if (this.vgs.some((vg) => vg.name === name)) fail(`volume group ${name} exists`);
        const vg: Mutable<VolumeGroupInfo> = {
          name: name!,
          uuid: `sim-vg-${++this.uuid}`,
          size: 0,
          free: 0,
          extentSize: DEFAULT_EXTENT_SIZE,
          extentCount: 0,
          freeExtentCount: 0,
          tags: tag ? [tag] : [],
        };
        this.vgs.push(vg);
        for (const p of paths) this.join(vg, p, fail);
        return;
      }
      case "vgextend":
        return this.join(this.vg(first!, fail), second!, fail);
      case "pvchange": {
        const tag = optionValue(argv, "--addtag") ?? fail("expected pvchange --addtag <tag> <device>");
        const pv = this.pvOn(this.device(first!, fail)) ?? fail("not a physical volume");
        if (!pv.vgName) fail("Can't change tag on Physical Volume not in volume group");
        if (!pv.tags.includes(tag)) pv.tags = [...pv.tags, tag];
        return;
      }
      case "pvmove": {
        const [from, ...to] = argv.positionals;
        if (optionValue(argv, "--interval") === undefined)
          fail("expected pvmove --interval <seconds> <source> <destinations>");
        const source = this.pvOn(this.device(from!, fail)) ?? fail("source is not a physical volume");
        const vg = this.vg(source.vgName, fail);
        let moving = Math.round((source.size - source.free) / vg.extentSize);
        for (const p of to) {
          const dest = this.pvOn(this.device(p, fail)) ?? fail(`${p} is not a physical volume`);
          if (dest.vgName !== vg.name) fail(`${p} is not in ${vg.name}`);
          const take = Math.min(moving, Math.floor(dest.free / vg.extentSize));
          dest.free -= take * vg.extentSize;
          moving -= take;
        }
        if (moving > 0) fail("Insufficient free space");
        source.free = source.size;
        return;
      }
      case "vgreduce": {
        const vg = this.vg(first!, fail);
        const pv = this.pvOn(this.device(second!, fail)) ?? fail("not a physical volume");
        if (pv.vgName !== vg.name) fail(`not in ${vg.name}`);
        if (pv.free !== pv.size) fail("Physical volume is still in use");
        if (this.pvs.filter((x) => x.vgName === vg.name).length === 1)
          fail("Can't remove final physical volume");
        const extents = Math.round(pv.size / vg.extentSize);
        this.resize(vg, -extents, -extents);
        Object.assign(pv, { vgName: "", tags: [] });
        return;
      }
      case "vgreduce-removemissing":
        return this.removeMissing(this.vg(a.volumeGroup ?? fail("names no volume group"), fail), a, fail);
      case "pvremove": {
        const d = this.device(first!, fail);
        const pv = this.pvOn(d) ?? fail("not a physical volume");
        if (pv.vgName) fail(`is in volume group ${pv.vgName}`);
        this.pvs = this.pvs.filter((x) => x !== pv);
        d.signatures = d.signatures.filter((x) => x.type !== "LVM2_member");
        return;
      }
      case "lvcreate-thinpool":
        return this.createPool(argv, fail);
      case "lvextend-thinpool": {
        const [vgName, name] = first!.split("/");
        const vg = this.vg(vgName!, fail);
        const lv =
          this.lvs.find((l) => l.vgName === vgName && l.name === name) ?? fail("no such logical volume");
        const current = Math.floor(lv.size / vg.extentSize);
        const spec =
          optionValue(argv, "--extents") ?? fail("expected lvextend --extents <extents> <vg>/<pool>");
        const target =
          spec === "+100%FREE"
            ? current + vg.freeExtentCount
            : spec.endsWith("%VG")
              ? percentOfExtents(vg.extentCount, Number(spec.slice(0, -3)), true)
              : Number(spec);
        if (target <= current)
          fail(`New size (${target} extents) not larger than existing size (${current} extents)`);
        this.allocate(vg, target - current, fail);
        lv.size = target * vg.extentSize;
        return;
      }
      case "lvextend-thinpool-metadata": {
        const size = optionValue(argv, "--poolmetadatasize");
        if (!size?.endsWith("b")) fail("expected lvextend --poolmetadatasize <bytes>b <vg>/<pool>");
        const [vgName, name] = first!.split("/");
        const vg = this.vg(vgName!, fail);
        const lv =
          this.lvs.find((l) => l.vgName === vgName && l.name === name && !l.hidden) ??
          fail("no such logical volume");
        const X = vg.extentSize;
        const meta = Math.ceil(Number(size!.slice(0, -1)) / X);
        const now = Math.ceil((lv.metadataSize ?? 0) / X);
        if (meta <= now)
          fail(`New size given (${meta} extents) not larger than existing size (${now} extents)`);
        const spareLv = this.lvs.find((l) => l.vgName === vg.name && l.name === "lvol0_pmspare");
        const spare = spareLv ? Math.floor(spareLv.size / X) : 0;
        this.allocate(vg, meta - now + Math.max(0, meta - spare), fail);
        lv.metadataSize = meta * X;
        const tmeta = this.lvs.find((l) => l.vgName === vgName && l.name === `${name}_tmeta`);
        if (tmeta) tmeta.size = meta * X;
        if (spareLv && meta > spare) spareLv.size = meta * X;
        return;
      }
      case "lvchange-deactivate": {
        const [vgName, name] = first!.split("/");
        const lv =
          this.lvs.find((l) => l.vgName === vgName && l.name === name) ?? fail("no such logical volume");
        if (this.lvs.some((l) => l.poolLv === name && l.vgName === vgName && l.attr[4] === "a"))
          fail("a thin volume in the pool is active");
        lv.attr = `${lv.attr.slice(0, 4)}-${lv.attr.slice(5)}`;
        return;
      }
      case "lvremove-thinpool": {
        const [vgName, name] = first!.split("/");
        const vg = this.vg(vgName!, fail);
        const lv =
          this.lvs.find((l) => l.vgName === vgName && l.name === name) ?? fail("no such logical volume");
        if (lv.attr[4] === "a") fail("Do you really want to remove active logical volume? (answered no)");
        if (this.lvs.some((l) => l.poolLv === name && l.vgName === vgName))
          fail("the pool has dependent volumes (answered no)");
        const parts = this.lvs.filter(
          (l) =>
            l.vgName === vgName && (l === lv || l.name === `${name}_tmeta` || l.name === `${name}_tdata`),
        );
        const freed = parts.reduce(
          (sum, l) => sum + (l.name.endsWith("_tdata") ? 0 : Math.floor(l.size / vg.extentSize)),
          0,
        );
        this.lvs = this.lvs.filter((l) => !parts.includes(l));
        this.release(vg, freed);
        return;
      }
      case "vgremove": {
        const force = argv.options.has("--force");
        const vg = this.vg(first!, fail);
        if (!force && this.lvs.some((l) => l.vgName === vg.name && !l.hidden && l.name !== "lvol0_pmspare"))
          fail(
            `Do you really want to remove volume group "${vg.name}" containing logical volumes? (answered no)`,
          );
        this.lvs = this.lvs.filter((l) => l.vgName !== vg.name);
        this.vgs = this.vgs.filter((x) => x !== vg);
        for (const pv of this.pvs)
          if (pv.vgName === vg.name) Object.assign(pv, { vgName: "", tags: [], free: pv.size });
        return;
      }
      case "lvmdevices-adddev":
      case "lvmdevices-deldev":
        return this.devicesFileStep(a.op, argv, fail);
      case "write-lvmd-config":
        return;
    }
  }

  /** lvm's devices file: --adddev lists the device (with its PV, as lvm does), --deldev unlists it. */
  private devicesFileStep(op: string, argv: ParsedArgv, fail: (m: string) => never): void {
    const file = this.devicesFile ?? fail("Devices file not enabled.");
    const path =
      optionValue(argv, op === "lvmdevices-adddev" ? "--adddev" : "--deldev") ?? fail("names no device");
    const d = this.device(path, fail);
    const names = [d.kname, d.path, ...d.symlinks];
    const pv = this.pvOn(d);
    const pvid = pv?.uuid.replace(/-/g, "");
    const mine = (e: DevicesFileEntry) =>
      (e.devname !== undefined && names.includes(e.devname)) || (pvid !== undefined && e.pvid === pvid);
    const others = file.entries.filter((e) => !mine(e));
    if (op === "lvmdevices-deldev" && others.length === file.entries.length)
      fail(`No devices file entry for ${path}.`);
    this.devicesFile = {
      ...file,
      entries:
        op === "lvmdevices-adddev" ? [...others, { devname: d.path, ...(pvid ? { pvid } : {}) }] : others,
    };
  }

  private createPool(argv: ParsedArgv, fail: (m: string) => never): void {
    const opt = (name: string) => optionValue(argv, name);
    const vg = this.vg(argv.positionals[argv.positionals.length - 1]!, fail);
    const name = opt("--name")!;
    if (this.lvs.some((l) => l.vgName === vg.name && l.name === name))
      fail(`Logical volume ${name} already exists`);
    const X = vg.extentSize;
    const extents = opt("--extents")!;
    const chunk = opt("--chunksize");
    const metaArg = opt("--poolmetadatasize");
    const bytes = (v: string) =>
      Number(v.slice(0, -1)) * { k: 1024, m: 1024 ** 2, g: 1024 ** 3 }[v.slice(-1) as "k" | "m" | "g"];
    const metaFor = (dataExtents: number) =>
      Math.ceil(
        (metaArg
          ? bytes(metaArg)
          : estimateThinMetadataBytes(dataExtents * X, chunk ? bytes(chunk) : undefined)) / X,
      );
    let data: number;
    let meta: number;
    if (extents === "100%FREE") {
      meta = metaFor(vg.freeExtentCount);
      data = vg.freeExtentCount - 2 * meta;
    } else {
      data = extents.endsWith("%VG")
        ? percentOfExtents(vg.extentCount, Number(extents.slice(0, -3)))
        : Number(extents);
      meta = metaFor(data);
    }
    const spareLv = this.lvs.find((l) => l.vgName === vg.name && l.name === "lvol0_pmspare");
    const spare = spareLv ? Math.floor(spareLv.size / X) : 0;
    const spareNeeded = Math.max(0, meta - spare);
    if (data < 1) fail("Not enough space for thin pool creation");
    this.allocate(vg, data + meta + spareNeeded, fail);
    const tag = opt("--addtag");
    this.lvs.push({
      name,
      vgName: vg.name,
      uuid: `sim-lv-${++this.uuid}`,
      size: data * X,
      attr: "twi-a-tz--",
      metadataSize: meta * X,
      chunkSize: chunk ? bytes(chunk) : simulatedChunk(data * X),
      tags: tag ? [tag] : [],
    });
    this.lvs.push({
      name: `${name}_tmeta`,
      vgName: vg.name,
      uuid: `sim-lv-${++this.uuid}`,
      size: meta * X,
      attr: "ewi-ao----",
      tags: [],
      hidden: true,
    });
    this.lvs.push({
      name: `${name}_tdata`,
      vgName: vg.name,
      uuid: `sim-lv-${++this.uuid}`,
      size: data * X,
      attr: "Twi-ao----",
      tags: [],
      hidden: true,
    });
    if (spareNeeded) {
      if (spareLv) spareLv.size = meta * X;
      else
        this.lvs.push({
          name: "lvol0_pmspare",
          vgName: vg.name,
          uuid: `sim-lv-${++this.uuid}`,
          size: meta * X,
          attr: "ewi-------",
          tags: [],
          hidden: true,
        });
    }
  }

  private join(vg: Mutable<VolumeGroupInfo>, path: string, fail: (m: string) => never): void {
    const d = this.device(path, fail);
    const pv = this.pvOn(d) ?? fail(`${path} is not a physical volume`);
    if (pv.vgName) fail(`${path} is already in volume group ${pv.vgName}`);
    const extents = estimatedPvExtents(d.size, vg.extentSize);
    Object.assign(pv, {
      vgName: vg.name,
      size: extents * vg.extentSize,
      free: extents * vg.extentSize,
      tags: [],
    });
    this.resize(vg, extents, extents);
  }

  /** Takes extents from the group's PVs in order, as lvm's normal allocation policy may. */
  private allocate(vg: Mutable<VolumeGroupInfo>, extents: number, fail: (m: string) => never): void {
    if (extents > vg.freeExtentCount)
      fail(`Insufficient free space: ${extents} extents needed, but only ${vg.freeExtentCount} available`);
    let left = extents;
    for (const pv of this.pvs) {
      if (pv.vgName !== vg.name || left === 0) continue;
      const take = Math.min(left, Math.floor(pv.free / vg.extentSize));
      pv.free -= take * vg.extentSize;
      left -= take;
    }
    this.resize(vg, 0, -extents);
  }

  private release(vg: Mutable<VolumeGroupInfo>, extents: number): void {
    let left = extents;
    for (const pv of this.pvs) {
      if (pv.vgName !== vg.name || left === 0) continue;
      const give = Math.min(left, Math.round((pv.size - pv.free) / vg.extentSize));
      pv.free += give * vg.extentSize;
      left -= give;
    }
    this.resize(vg, 0, extents);
  }

  /** vgreduce --removemissing [--force]: without --force lvm refuses while a volume is partial. */
  private removeMissing(vg: Mutable<VolumeGroupInfo>, a: PlanAction, fail: (m: string) => never): void {
    const known = (pv: PhysicalVolume) => this.devices.some((d) => this.pvOn(d) === pv);
    const missing = this.pvs.filter((pv) => pv.vgName === vg.name && (pv.missing || !known(pv)));
    const partial = this.lvs.filter((lv) => lv.vgName === vg.name && lv.attr[8] === "p");
    const force = a.argv.includes("--force");
    if (partial.length && !force) fail(`There are still partial LVs in VG ${vg.name}.`);
    const lost = new Set(partial.map((lv) => lv.name));
    for (const lv of partial) if (lv.hidden) lost.add(thinPoolOf(lv.name));
    this.lvs = this.lvs.filter(
      (lv) => lv.vgName !== vg.name || (!lost.has(lv.name) && !lost.has(lv.poolLv ?? "\u0000")),
    );
    for (const pv of missing) {
      const extents = Math.round(pv.size / vg.extentSize);
      this.resize(vg, -extents, -Math.round(pv.free / vg.extentSize));
    }
    this.pvs = this.pvs.filter((pv) => !missing.includes(pv));
  }

  private resize(vg: Mutable<VolumeGroupInfo>, total: number, free: number): void {
    vg.extentCount += total;
    vg.freeExtentCount += free;
    vg.size = vg.extentCount * vg.extentSize;
    vg.free = vg.freeExtentCount * vg.extentSize;
  }

  private device(path: string, fail: (m: string) => never): Mutable<BlockDevice> {
    return (
      this.devices.find((d) => d.path === path || d.kname === path || d.symlinks.includes(path)) ??
      fail(`${path}: no such device`)
    );
  }

  private pvOn(d: BlockDevice): Mutable<PhysicalVolume> | undefined {
    return this.pvs.find(
      (pv) => pv.device === d.path || pv.device === d.kname || d.symlinks.includes(pv.device),
    );
  }

  private vg(name: string, fail: (m: string) => never): Mutable<VolumeGroupInfo> {
    return this.vgs.find((vg) => vg.name === name) ?? fail(`volume group ${name} not found`);
  }
}

/** lvm's generic chunk size policy for a pool of `dataBytes`: 64KiB doubled while metadata would exceed 128MiB. */
function simulatedChunk(dataBytes: number): number {
  let chunk = 64 * 1024;
  while (Math.ceil(dataBytes / chunk) * 64 > 128 * 1024 ** 2 && chunk < 1024 ** 3) chunk *= 2;
  return chunk;
}
