import type { BlockDevice } from "../inventory/types";
import type { NodeIndex } from "./node-index";

/**
 * Stable device identity: what the agent re-checks before it writes to a device, so that a plan made
 * for one disk is never applied to another that took its kernel name.
 *
 * In order of preference:
 *   1. "wwn:<wwn>+serial:<serial>" (or just one of them when the other is unknown), for a device
 *      with no parent whose values no other such device shares. Partitions and stacked devices
 *      inherit their disk's, and multipath legs share them, so those fall through to
 *   2. "by-id:<link>": the first /dev/disk/by-id/ link in sort order,
 *   3. "pv:<uuid>": the PV UUID of a physical volume in a volume group (not of an orphan PV: a plan
 *      may wipe and re-create that, and the id must hold for every step of the plan),
 *   4. "kname:<path>": the kernel name path, the only id that does not survive a rename.
 */
export function deviceIds(index: NodeIndex): ReadonlyMap<string, string> {
  const devices = index.devices;
  const hardware = new Array<string | undefined>(devices.length);
  const sharedBy = new Map<string, number>();
  for (let i = 0; i < devices.length; i++) {
    const d = devices[i]!;
    const id = d.parent ? undefined : hardwareId(d);
    hardware[i] = id;
    if (id) sharedBy.set(id, (sharedBy.get(id) ?? 0) + 1);
  }
  const ids = new Map<string, string>();
  for (let i = 0; i < devices.length; i++) {
    const d = devices[i]!;
    const hw = hardware[i];
    if (hw && sharedBy.get(hw) === 1) {
      ids.set(d.kname, hw);
      continue;
    }
    const byId = firstByIdLink(d.symlinks);
    if (byId) {
      ids.set(d.kname, `by-id:${byId}`);
      continue;
    }
    const pv = index.pvByKname.get(d.kname);
    ids.set(d.kname, pv?.uuid && pv.vgName ? `pv:${pv.uuid}` : `kname:${d.kname}`);
  }
  return ids;
}

function hardwareId(d: BlockDevice): string | undefined {
  const wwn = d.wwn?.trim().toLowerCase();
  const serial = d.serial?.trim();
  if (wwn && serial) return `wwn:${wwn}+serial:${serial}`;
  if (wwn) return `wwn:${wwn}`;
  if (serial) return `serial:${serial}`;
  return undefined;
}

/** The first /dev/disk/by-id/ link in sort order. */
function firstByIdLink(links: readonly string[]): string | undefined {
  let first: string | undefined;
  for (const l of links)
    if (l.startsWith("/dev/disk/by-id/") && (first === undefined || l < first)) first = l;
  return first;
}
