import type { DeviceClass } from "../api";
import type { LogicalVolume } from "../inventory/types";
import type { Blocked } from "./types";
import { formatSize } from "./units";

/**
 * Settings of an existing thin pool that lvm cannot change (docs/plan-format.md, "Thin pools"): its
 * chunk size, and a data size above what `sizePercent` now asks (lvm cannot shrink a pool). Each
 * difference is blocked with the reason and what the user can do; the pool itself stays in use.
 */
export function fixedPoolSettings(args: {
  readonly vg: string;
  readonly dc: DeviceClass;
  readonly pool: LogicalVolume;
  /** The requested chunk size in bytes, when the device class sets one. */
  readonly chunk: number | undefined;
  /** The pool's data extents now, and the group's extent count (exact geometry only). */
  readonly current: number;
  readonly extentCount: number;
  readonly extentSize: number;
}): Blocked[] {
  const { vg, dc, pool, chunk, current, extentCount } = args;
  const thin = dc.thin!;
  const what = `thin pool ${vg}/${thin.poolName} of device class ${dc.name}`;
  const instead = "create a new pool (a new poolName)";
  const blocked: Blocked[] = [];
  if (chunk !== undefined && pool.chunkSize && pool.chunkSize !== chunk)
    blocked.push({
      volumeGroup: vg,
      reason: `${what} has ${formatSize(pool.chunkSize)} chunks and chunkSize asks for ${formatSize(chunk)}: lvm cannot change the chunk size of an existing pool. Set chunkSize to ${formatSize(pool.chunkSize)} (or leave it out) to keep the pool, or ${instead} and move the volumes to it`,
    });
  // lvextend --extents p%VG rounds up, so a pool one extent over floor(p%) is lvm's rounding.
  const pct = thin.sizePercent;
  const allowed = Math.ceil((extentCount * pct) / 100);
  if (current > allowed) {
    const keep = Math.min(100, Math.ceil((current * 100) / extentCount));
    blocked.push({
      volumeGroup: vg,
      reason: `${what} has ${current} extents (${formatSize(current * args.extentSize)}), more than sizePercent ${pct} of ${vg} (${Math.floor((extentCount * pct) / 100)} of ${extentCount} extents): lvm cannot shrink a thin pool. Set sizePercent to at least ${keep} to keep the pool, or ${instead} of the smaller size and move the volumes to it`,
    });
  }
  return blocked;
}
