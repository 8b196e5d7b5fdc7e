import type { DeviceClass } from "../api";
import { quantityToBytes } from "../api";
import type { LogicalVolume } from "../inventory/types";
import { lvcreateThinPoolArgv, lvextendThinPoolArgv, lvextendThinPoolMetadataArgv } from "./argv";
import { step, thinPoolPlan } from "./plan-objects";
import { fixedPoolSettings } from "./thin-settings";
import type { Blocked, PlanAction, ThinPoolPlan } from "./types";
import { formatSize } from "./units";

/**
 * Thin pool sizing (docs/plan-format.md, "Thin pools"). A pool's data takes `sizePercent` of the
 * volume group's extents, rounded down; its metadata and lvm's spare metadata LV (pmspare, as large as
 * the largest pool metadata in the group) come out of the rest. When the rest is too small (100%, or
 * other logical volumes use space) the data shrinks to what fits. Pools never shrink.
 *
 * When the group's extent count is known (it exists and this plan does not change its physical volumes)
 * the plan carries exact extent counts and an explicit --poolmetadatasize. When it is not (the group is
 * created or its physical volumes change in this plan) the plan lets lvm apply the same rule at run time:
 * `--extents <p>%VG` (lvcreate rounds down; lvextend rounds up), and `100%FREE`, for which lvcreate
 * itself sets aside metadata and spare. Either way the next plan computes the same target, so a
 * converged node gets no thin pool actions.
 */

/** The volume group's size in extents, now (exact) or as this plan will leave it (estimated). */
export interface VolumeGroupGeometry {
  /** True when the counts are lvm's own; false when they are estimates for after this plan. */
  readonly exact: boolean;
  readonly extentSize: number;
  readonly extentCount: number;
  readonly freeExtents: number;
}

export interface ThinPoolsArgs {
  readonly vg: string;
  /** The Thin device classes on this group, in spec order. */
  readonly classes: readonly DeviceClass[];
  /** The group's logical volumes now (hidden ones included, when the inventory has them). */
  readonly lvs: readonly LogicalVolume[];
  readonly geometry: VolumeGroupGeometry;
}

export interface ThinPoolsResult {
  readonly pools: readonly ThinPoolPlan[];
  readonly actions: readonly PlanAction[];
  readonly blocked: readonly Blocked[];
  /** Device classes whose pool exists once the plan has run. */
  readonly ready: ReadonlySet<string>;
}

const KIB = 1024;
const MIB = 1024 * KIB;
const GIB = 1024 * MIB;
/** lvm2's bounds and "generic" chunk size policy (thin_pool_chunk_size_policy). */
const MIN_METADATA = 2 * MIB;
const MAX_METADATA = 16 * GIB;
const OPTIMAL_METADATA = 128 * MIB;
const DEFAULT_CHUNK = 64 * KIB;
const MAX_CHUNK = GIB;
/** lvm2 needs 64 bytes of pool metadata per data chunk. */
const METADATA_PER_CHUNK = 64;

/**
 * lvm2's default metadata size for a pool of `dataBytes`: 64 bytes per chunk, the chunk size doubling
 * from 64KiB (generic policy) until that is at most 128MiB, clamped to 2MiB..16GiB.
 */
export function estimateThinMetadataBytes(dataBytes: number, chunkBytes?: number): number {
  let chunk = chunkBytes ?? DEFAULT_CHUNK;
  if (!chunkBytes)
    while (Math.ceil(dataBytes / chunk) * METADATA_PER_CHUNK > OPTIMAL_METADATA && chunk < MAX_CHUNK)
      chunk *= 2;
  const bytes = Math.ceil(dataBytes / chunk) * METADATA_PER_CHUNK;
  return Math.min(MAX_METADATA, Math.max(MIN_METADATA, bytes));
}

/**
 * The metadata size lvm2 (2.03.16, measured in the qemu guest) gives a pool of `dataBytes` with chunks
 * of `chunkBytes`: 64 bytes per chunk, in whole 512-byte sectors rounded down, clamped to 2MiB..16GiB.
 * lvcreate and lvextend then round it up to whole extents (thinMetadataExtents). Monotone in dataBytes.
 */
export function lvmThinMetadataBytes(dataBytes: number, chunkBytes: number): number {
  const sectors = Math.floor(((dataBytes / chunkBytes) * METADATA_PER_CHUNK) / 512);
  return Math.min(MAX_METADATA, Math.max(MIN_METADATA, sectors * 512));
}

/** lvmThinMetadataBytes for `dataExtents` extents of `extentSize`, rounded up to whole extents. */
export function thinMetadataExtents(dataExtents: number, extentSize: number, chunkBytes: number): number {
  return Math.ceil(lvmThinMetadataBytes(dataExtents * extentSize, chunkBytes) / extentSize);
}

/** floor(count × percent / 100), as lvcreate computes %VG. */
export function percentOfExtents(count: number, percent: number, roundUp = false): number {
  const scaled = count * percent;
  return roundUp ? Math.ceil(scaled / 100) : Math.floor(scaled / 100);
}

export function planThinPools(args: ThinPoolsArgs): ThinPoolsResult {
  const { vg, geometry: g } = args;
  const X = g.extentSize;
  let free = g.freeExtents;
  let spare = extentsOf(args.lvs.find((lv) => lv.name === "lvol0_pmspare")?.size ?? 0, X);
  const pools: ThinPoolPlan[] = [];
  const actions: PlanAction[] = [];
  const blocked: Blocked[] = [];
  const ready = new Set<string>();

  for (const dc of args.classes) {
    const thin = dc.thin!;
    const pct = thin.sizePercent;
    const chunk = thin.chunkSize ? quantityToBytes(thin.chunkSize) : undefined;
    const lv = args.lvs.find((l) => l.name === thin.poolName && !l.hidden);
    const where = `${vg}/${thin.poolName}`;

    if (lv && !lv.attr.startsWith("t")) {
      pools.push(thinPoolPlan({ name: thin.poolName, deviceClass: dc.name, exists: true }));
      blocked.push({
        volumeGroup: vg,
        reason: `${where} exists and is not a thin pool (lv_attr ${lv.attr}), so device class ${dc.name} is not configured`,
      });
      continue;
    }

    if (lv) {
      const current = extentsOf(lv.size, X);
      ready.add(dc.name);
      blocked.push(...fixedPoolSettings({ vg, dc, pool: lv, chunk }));
      if (g.exact) {
        const target = Math.min(percentOfExtents(g.extentCount, pct), current + free);
        pools.push(
          thinPoolPlan({
            name: thin.poolName,
            deviceClass: dc.name,
            exists: true,
            extents: current,
            targetExtents: Math.max(current, target),
          }),
        );
        if (target > current) {
          free -= target - current;
          actions.push(
            step(
              "lvextend-thinpool",
              lvextendThinPoolArgv(vg, thin.poolName, target),
              `grow thin pool ${where} of device class ${dc.name} from ${current} to ${target} extents (${pct}% of ${g.extentCount})`,
              { volumeGroup: vg },
            ),
          );
        }
        // Metadata: at least what lvm would give a pool of the data size after this plan, and at least
        // an explicit metadataSize (lvm grows pool metadata, never shrinks it). lvm 2.03.16's lvextend
        // grows it along with the data; older ones do not, and a pool grown by them (or by hand) catches
        // up here. Needs the inventory's lv_metadata_size and chunk_size.
        if (lv.metadataSize !== undefined && lv.chunkSize) {
          const data = Math.max(current, target);
          const metaNow = Math.ceil(lv.metadataSize / X);
          const lvmNeed = thinMetadataExtents(data, X, lv.chunkSize);
          const asked = thin.metadataSize ? Math.ceil(quantityToBytes(thin.metadataSize) / X) : 0;
          const need = Math.max(lvmNeed, asked);
          const why =
            asked > lvmNeed
              ? `its metadataSize`
              : `what lvm gives ${data} data extents in ${formatSize(lv.chunkSize)} chunks`;
          if (need > metaNow) {
            const spareNeeded = Math.max(0, need - spare);
            const grow = need - metaNow + spareNeeded;
            if (grow > free) {
              blocked.push({
                volumeGroup: vg,
                reason: `thin pool ${where}'s metadata (${formatSize(metaNow * X)}) is smaller than ${asked > lvmNeed ? `its metadataSize ${formatSize(need * X)}` : `lvm's ${formatSize(need * X)} for ${data} data extents`}, and ${vg} has ${free} free extents where growing it needs ${grow} (metadata and spare)`,
              });
            } else {
              free -= grow;
              spare = Math.max(spare, need);
              actions.push(
                step(
                  "lvextend-thinpool-metadata",
                  lvextendThinPoolMetadataArgv(vg, thin.poolName, need * X),
                  `grow the metadata of thin pool ${where} of device class ${dc.name} from ${formatSize(metaNow * X)} to ${formatSize(need * X)}, ${why}`,
                  { volumeGroup: vg },
                ),
              );
            }
          }
        }
        continue;
      }
      const estimate = pct === 100 ? current + free : percentOfExtents(g.extentCount, pct, true);
      if (estimate <= current) {
        pools.push(
          thinPoolPlan({ name: thin.poolName, deviceClass: dc.name, exists: true, extents: current }),
        );
        continue;
      }
      pools.push(
        thinPoolPlan({
          name: thin.poolName,
          deviceClass: dc.name,
          exists: true,
          extents: current,
          targetPercent: growPercent(pct),
        }),
      );
      if (estimate - current > free) {
        blocked.push({
          volumeGroup: vg,
          reason: `thin pool ${where} is grown by a later plan: ${pct}% of ${vg} after this plan (about ${estimate} extents) does not fit in its free space (about ${free} extents)`,
        });
        continue;
      }
      free -= estimate - current;
      actions.push(
        step(
          "lvextend-thinpool",
          lvextendThinPoolArgv(vg, thin.poolName, growPercent(pct)),
          `grow thin pool ${where} of device class ${dc.name} to ${pct}% of ${vg} once its physical volumes have changed (lvm computes the extents)`,
          { volumeGroup: vg },
        ),
      );
      continue;
    }

    // The pool does not exist yet.
    const budget = percentOfExtents(g.extentCount, pct);
    const metadataBytes = thin.metadataSize
      ? quantityToBytes(thin.metadataSize)
      : estimateThinMetadataBytes(budget * X, chunk);
    const metadata = Math.ceil(metadataBytes / X);
    const spareNeeded = Math.max(0, metadata - spare);
    const data =
      g.exact || pct < 100 ? Math.min(budget, free - metadata - spareNeeded) : free - metadata - spareNeeded;
    const smallest = Math.max(1, Math.ceil((chunk ?? DEFAULT_CHUNK) / X));
    if (data < smallest || (!g.exact && pct < 100 && budget > data)) {
      pools.push(thinPoolPlan({ name: thin.poolName, deviceClass: dc.name, exists: false }));
      blocked.push({
        volumeGroup: vg,
        reason: g.exact
          ? `thin pool ${where} does not fit: ${vg} has ${free} free extents (${formatSize(free * X)}) and the pool needs at least ${smallest + metadata + spareNeeded} for data, metadata and spare`
          : `thin pool ${where} is created by a later plan: ${pct}% of ${vg} after this plan (about ${budget} extents) plus metadata does not fit in its free space (about ${free} extents)`,
      });
      continue;
    }
    ready.add(dc.name);
    free -= data + metadata + spareNeeded;
    spare = Math.max(spare, metadata);
    if (g.exact) {
      pools.push(
        thinPoolPlan({ name: thin.poolName, deviceClass: dc.name, exists: false, targetExtents: data }),
      );
      actions.push(
        step(
          "lvcreate-thinpool",
          lvcreateThinPoolArgv({
            vg,
            pool: thin.poolName,
            extents: data,
            chunkSizeBytes: chunk,
            metadataSizeBytes: metadata * X,
          }),
          `create thin pool ${where} for device class ${dc.name}: ${data} extents (${pct}% of ${g.extentCount}${data < budget ? ", less room for its metadata and spare" : ""}), metadata ${formatSize(metadata * X)}`,
          { volumeGroup: vg },
        ),
      );
    } else {
      const percent = pct === 100 ? "100%FREE" : `${pct}%VG`;
      pools.push(
        thinPoolPlan({ name: thin.poolName, deviceClass: dc.name, exists: false, targetPercent: percent }),
      );
      actions.push(
        step(
          "lvcreate-thinpool",
          lvcreateThinPoolArgv({
            vg,
            pool: thin.poolName,
            extents: percent,
            chunkSizeBytes: chunk,
            metadataSizeBytes: thin.metadataSize ? metadata * X : undefined,
          }),
          `create thin pool ${where} for device class ${dc.name} with ${pct === 100 ? "all free space, less metadata and spare" : `${pct}% of ${vg}`}; lvm computes the extents because ${vg}'s size is only known once this plan's devices have joined`,
          { volumeGroup: vg },
        ),
      );
    }
  }
  return { pools, actions, blocked, ready };
}

function growPercent(pct: number): string {
  return pct === 100 ? "+100%FREE" : `${pct}%VG`;
}

function extentsOf(bytes: number, extentSize: number): number {
  return Math.floor(bytes / extentSize);
}
