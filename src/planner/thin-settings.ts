import type { DeviceClass } from "../api";
import type { LogicalVolume } from "../inventory/types";
import type { Blocked } from "./types";
import { formatSize } from "./units";

/**
 * Settings of an existing thin pool that lvm cannot change (docs/plan-format.md, "Thin pools"): its
 * chunk size. Each difference is blocked with the reason and what the user can do; the pool itself
 * stays in use. A pool larger than `sizePercent` of its group is not one: a group that lost a disk
 * (pvmove, vgreduce) leaves its pool above its share just as a lowered sizePercent does, and the
 * plan cannot tell the two apart from what lvm reports.
 */
export function fixedPoolSettings(args: {
  readonly vg: string;
  readonly dc: DeviceClass;
  readonly pool: LogicalVolume;
  /** The requested chunk size in bytes, when the device class sets one. */
  readonly chunk: number | undefined;
}): Blocked[] {
  const { vg, dc, pool, chunk } = args;
  const thin = dc.thin!;
  const what = `thin pool ${vg}/${thin.poolName} of device class ${dc.name}`;
  const instead = "create a new pool (a new poolName)";
  const blocked: Blocked[] = [];
  if (chunk !== undefined && pool.chunkSize && pool.chunkSize !== chunk)
    blocked.push({
      volumeGroup: vg,
      reason: `${what} has ${formatSize(pool.chunkSize)} chunks and chunkSize asks for ${formatSize(chunk)}: lvm cannot change the chunk size of an existing pool. Set chunkSize to ${formatSize(pool.chunkSize)} (or leave it out) to keep the pool, or ${instead} and move the volumes to it`,
    });
  return blocked;
}
