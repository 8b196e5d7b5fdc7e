import type { BlockDevice, NodeInventory, PhysicalVolume } from "../inventory/types";

/**
 * A node's inventory indexed for planning: devices in a fixed order (so the plan does not depend on
 * the order the inventory lists them in), every name a device answers to, the device tree in both
 * directions, and which device each physical volume lives on.
 */
export interface NodeIndex {
  readonly inventory: NodeInventory;
  /** Every device, in natural kernel-name order (sda, sdb, ..., sdz, sdaa; nvme0n1 before nvme10n1). */
  readonly devices: readonly BlockDevice[];
  readonly byKname: ReadonlyMap<string, BlockDevice>;
  /** kname, path and every symlink → the device. */
  readonly byName: ReadonlyMap<string, BlockDevice>;
  /** Device kname → the physical volume on it. */
  readonly pvByKname: ReadonlyMap<string, PhysicalVolume>;
  /** Physical volumes whose device is not in the inventory (lvm's "[unknown]", a vanished disk). */
  readonly missingPvs: readonly PhysicalVolume[];
  /** Devices directly on top of a device (partitions, dm/md/crypt holders), in kname order. */
  childrenOf(kname: string): readonly BlockDevice[];
  /** Every device above a device, depth first, each once. */
  descendantsOf(kname: string): readonly BlockDevice[];
}

/** An inventory the planner cannot work from (two devices with one kernel name). */
export class InventoryError extends Error {
  constructor(
    readonly node: string,
    message: string,
  ) {
    super(`node ${node}: ${message}`);
    this.name = "InventoryError";
  }
}

export function indexNode(inventory: NodeInventory): NodeIndex {
  const devices = sortNatural(inventory.devices, (d) => d.kname);
  const byKname = new Map<string, BlockDevice>();
  for (const d of devices) {
    if (byKname.has(d.kname))
      throw new InventoryError(inventory.node, `two devices have the kernel name ${d.kname}`);
    byKname.set(d.kname, d);
  }
  // Every name, built when a name that is not a kernel name is first looked up (kname/path/symlink
  // selectors, a PV lvm names by another path): most specs select by attributes and never need it.
  let names: Map<string, BlockDevice> | undefined;
  const byName = (): ReadonlyMap<string, BlockDevice> => (names ??= namesOf(devices));

  // Parent kname → the devices directly on it, each once, in natural kname order (most have none).
  const childLists = new Map<string, BlockDevice[]>();
  const addChild = (parent: string, child: string) => {
    const device = byKname.get(child);
    if (!device || !byKname.has(parent) || parent === child) return;
    const list = childLists.get(parent);
    if (!list) childLists.set(parent, [device]);
    else if (!list.includes(device)) list.push(device);
  };
  for (const d of devices) {
    for (const c of d.children) addChild(d.kname, c);
    if (d.parent) addChild(d.parent, d.kname);
  }
  if (childLists.size)
    for (const list of childLists.values())
      if (list.length > 1) list.sort((a, b) => compareNatural(a.kname, b.kname));
  const childrenOf = (kname: string): readonly BlockDevice[] => childLists.get(kname) ?? NONE;

  const pvByKname = new Map<string, PhysicalVolume>();
  const missingPvs: PhysicalVolume[] = [];
  for (const pv of inventory.pvs) {
    // A kernel name always names its own device (namesOf), so byKname answers most PVs.
    const device = byKname.get(pv.device) ?? byName().get(pv.device);
    if (device) pvByKname.set(device.kname, pv);
    else missingPvs.push(pv);
  }

  return {
    inventory,
    devices,
    byKname,
    get byName() {
      return byName();
    },
    pvByKname,
    missingPvs,
    childrenOf,
    descendantsOf(kname) {
      if (!childLists.has(kname)) return NONE;
      const seen = new Set<string>([kname]);
      const out: BlockDevice[] = [];
      const visit = (k: string) => {
        for (const c of childrenOf(k)) {
          if (seen.has(c.kname)) continue;
          seen.add(c.kname);
          out.push(c);
          visit(c.kname);
        }
      };
      visit(kname);
      return out;
    },
  };
}

const NONE: readonly BlockDevice[] = [];

/** kname, path and every symlink → the device. */
function namesOf(devices: readonly BlockDevice[]): Map<string, BlockDevice> {
  const byName = new Map<string, BlockDevice>();
  // Symlinks first, then paths, then knames: a device's own kname always wins over a stale link.
  for (const d of devices) for (const link of d.symlinks) byName.set(link, d);
  for (const d of devices) byName.set(d.path, d);
  for (const d of devices) byName.set(d.kname, d);
  return byName;
}

/** How a device is named in messages and lvm commands: its path ("/dev/mapper/crypt-a"), else its kname. */
export function displayName(device: BlockDevice): string {
  return device.path || device.kname;
}

/** Orders strings with embedded numbers by their value: "/dev/sd2" < "/dev/sd10", "/dev/nvme2n1" < "/dev/nvme10n1". */
export function compareNatural(a: string, b: string): number {
  if (a === b) return 0;
  const ka = naturalKey(a);
  const kb = naturalKey(b);
  if (ka !== kb) return ka < kb ? -1 : 1;
  return a < b ? -1 : 1;
}

/** Items in natural order of a string of each (computed once per item). */
export function sortNatural<T>(items: readonly T[], nameOf: (item: T) => string): T[] {
  const n = items.length;
  const names = new Array<string>(n);
  const keys = new Array<string>(n);
  let sorted = true;
  for (let i = 0; i < n; i++) {
    names[i] = nameOf(items[i]!);
    keys[i] = naturalKey(names[i]!);
    if (i > 0 && sorted && compareKeys(keys, names, i - 1, i) > 0) sorted = false;
  }
  if (sorted) return items.slice();
  const order = new Array<number>(n);
  for (let i = 0; i < n; i++) order[i] = i;
  // Ties (equal names) keep their input order, as a stable sort would. A node has a few dozen devices:
  // insertion sort, in place, allocates nothing (Array.prototype.sort copies into work arrays).
  if (n <= 64)
    for (let i = 1; i < n; i++) {
      const item = order[i]!;
      let j = i - 1;
      for (; j >= 0 && compareKeys(keys, names, order[j]!, item) > 0; j--) order[j + 1] = order[j]!;
      order[j + 1] = item;
    }
  else order.sort((a, b) => compareKeys(keys, names, a, b) || a - b);
  const out = new Array<T>(n);
  for (let i = 0; i < n; i++) out[i] = items[order[i]!]!;
  return out;
}

function compareKeys(keys: readonly string[], names: readonly string[], a: number, b: number): number {
  const ka = keys[a]!;
  const kb = keys[b]!;
  if (ka !== kb) return ka < kb ? -1 : 1;
  const na = names[a]!;
  const nb = names[b]!;
  return na < nb ? -1 : na > nb ? 1 : 0;
}

/** Keys of recently compared strings: the same kernel names recur on every node. */
const naturalKeys = new Map<string, string>();

/** The string with every run of digits left-padded to 20 places, so plain comparison orders numbers by value. */
function naturalKey(s: string): string {
  let key = naturalKeys.get(s);
  if (key === undefined) {
    if (naturalKeys.size > 10_000) naturalKeys.clear();
    naturalKeys.set(s, (key = s.replace(/\d+/g, (digits) => digits.padStart(20, "0"))));
  }
  return key;
}

/** "a", "a and b", "a, b and c". */
export function joinNames(names: readonly string[]): string {
  if (names.length <= 1) return names.join("");
  return `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
}
