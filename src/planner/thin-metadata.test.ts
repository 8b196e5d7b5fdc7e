import fc from "fast-check";
import { applyPlanEffects } from "./simulate";
import { lvmThinMetadataBytes, planThinPools, thinMetadataExtents } from "./thin";
import { thinPoolLv } from "../../test/support/planner/testing";
import type { DeviceClass } from "../api";
import type { LogicalVolume } from "../inventory/types";

const KiB = 1024;
const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const X = 4 * MiB;

describe("thinMetadataExtents: what lvm2 2.03.16 gives a pool's metadata (measured in the qemu guest)", () => {
  // lvcreate --type thin-pool --size <data> / lvextend of the pool, then lvs -o lv_metadata_size,chunk_size;
  // 4MiB extents. The chunk size is lvm's own (generic policy) unless noted.
  test.each([
    ["1GiB", 1 * GiB, 64 * KiB, 4 * MiB], // 1MiB → the 2MiB minimum → one extent
    ["1828MiB (guest-thin.json's pool0)", 457 * X, 64 * KiB, 4 * MiB],
    ["4GiB", 4 * GiB, 64 * KiB, 4 * MiB],
    ["5GiB", 5 * GiB, 64 * KiB, 8 * MiB], // 5MiB → 2 extents
    ["8GiB", 8 * GiB, 64 * KiB, 8 * MiB],
    ["16GiB", 16 * GiB, 64 * KiB, 16 * MiB],
    ["40GiB", 40 * GiB, 64 * KiB, 40 * MiB],
    ["100GiB", 100 * GiB, 64 * KiB, 100 * MiB],
    ["150GiB (lvm chose 128KiB chunks)", 150 * GiB, 128 * KiB, 76 * MiB], // 75MiB → 19 extents
    ["30719 extents (60%VG of 200GiB)", 30719 * X, 64 * KiB, 120 * MiB],
    ["61439 extents (after lvextend 60%VG of 400GiB)", 61439 * X, 64 * KiB, 240 * MiB],
    ["10239 extents, --chunksize 256k", 10239 * X, 256 * KiB, 12 * MiB],
    ["92159 extents, --chunksize 256k, after lvextend 90%VG", 92159 * X, 256 * KiB, 92 * MiB],
  ])("%s", (_name, data, chunk, expected) => {
    expect(thinMetadataExtents(data / X, X, chunk) * X).toBe(expected);
  });

  test("monotone in the data size, within lvm's 2MiB..16GiB, never below the current size after growth", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 4 * 1024 * 1024 }),
        fc.integer({ min: 0, max: 1024 * 1024 }),
        fc.integer({ min: 0, max: 14 }),
        (extents, more, chunkShift) => {
          const chunk = 64 * KiB * 2 ** chunkShift;
          const a = lvmThinMetadataBytes(extents * X, chunk);
          const b = lvmThinMetadataBytes((extents + more) * X, chunk);
          expect(b).toBeGreaterThanOrEqual(a);
          for (const m of [a, b]) {
            expect(m).toBeGreaterThanOrEqual(2 * MiB);
            expect(m).toBeLessThanOrEqual(16 * GiB);
          }
          expect(thinMetadataExtents(extents + more, X, chunk)).toBeGreaterThanOrEqual(
            thinMetadataExtents(extents, X, chunk),
          );
        },
      ),
    );
  });
});

describe("planThinPools: a pool's metadata follows its data", () => {
  const dc: DeviceClass = {
    name: "thin",
    strategy: "Thin",
    volumeGroup: "vg1",
    thin: { poolName: "pool0", sizePercent: 60, overprovisionRatio: 10 },
  };
  const pool = (extents: number, metadataBytes: number): LogicalVolume => ({
    ...thinPoolLv("vg1", "pool0", extents, X),
    metadataSize: metadataBytes,
    chunkSize: 64 * KiB,
  });
  const spare = (bytes: number): LogicalVolume => ({
    name: "lvol0_pmspare",
    vgName: "vg1",
    uuid: "spare",
    size: bytes,
    attr: "ewi-------",
    tags: [],
    hidden: true,
  });

  test("grown pool: lvextend, then lvextend --poolmetadatasize to lvm's size for the new data", () => {
    // 60% of 102398 extents = 61438; metadata now 120MiB (30 extents) for 30719
    const r = planThinPools({
      vg: "vg1",
      classes: [dc],
      lvs: [pool(30719, 120 * MiB), spare(120 * MiB)],
      geometry: { exact: true, extentSize: X, extentCount: 102398, freeExtents: 102398 - 30719 - 60 },
    });
    expect(r.actions.map((a) => [a.op, a.argv.join(" ")])).toEqual([
      ["lvextend-thinpool", "lvextend --extents 61438 vg1/pool0"],
      ["lvextend-thinpool-metadata", `lvextend --poolmetadatasize ${240 * MiB}b vg1/pool0`],
    ]);
    expect(r.actions[1]!.reason).toBe(
      "grow the metadata of thin pool vg1/pool0 of device class thin from 120Mi to 240Mi, what lvm gives 61438 data extents in 64Ki chunks",
    );
  });

  test("a pool whose data did not grow but whose metadata is short catches up; an adequate one gets nothing", () => {
    const geometry = { exact: true, extentSize: X, extentCount: 10000, freeExtents: 3000 };
    const short = planThinPools({
      vg: "vg1",
      classes: [dc],
      lvs: [pool(6000, 4 * MiB), spare(4 * MiB)],
      geometry,
    });
    expect(short.actions.map((a) => a.argv.join(" "))).toEqual([
      `lvextend --poolmetadatasize ${24 * MiB}b vg1/pool0`,
    ]);
    const fine = planThinPools({
      vg: "vg1",
      classes: [dc],
      lvs: [pool(6000, 24 * MiB), spare(24 * MiB)],
      geometry,
    });
    expect(fine.actions).toEqual([]);
    // no lv_metadata_size / chunk_size in the inventory: nothing is guessed
    const unknown = planThinPools({
      vg: "vg1",
      classes: [dc],
      lvs: [thinPoolLv("vg1", "pool0", 6000, X)],
      geometry,
    });
    expect(unknown.actions).toEqual([]);
  });

  test("no room for the metadata and its spare: blocked with the numbers", () => {
    const r = planThinPools({
      vg: "vg1",
      classes: [dc],
      lvs: [pool(6000, 4 * MiB), spare(4 * MiB)],
      geometry: { exact: true, extentSize: X, extentCount: 10000, freeExtents: 3 },
    });
    expect(r.actions).toEqual([]);
    expect(r.blocked[0]!.reason).toBe(
      "thin pool vg1/pool0's metadata (4Mi) is smaller than lvm's 24Mi for 6000 data extents, and vg1 has 3 free extents where growing it needs 10 (metadata and spare)",
    );
  });

  test("the simulator grows metadata and spare; planning again gives nothing", () => {
    const lvs = [pool(6000, 4 * MiB), spare(4 * MiB)];
    const geometry = { exact: true, extentSize: X, extentCount: 10000, freeExtents: 3000 };
    const r = planThinPools({ vg: "vg1", classes: [dc], lvs, geometry });
    const inv = {
      node: "n",
      labels: {},
      devices: [],
      pvs: [],
      vgs: [
        {
          name: "vg1",
          uuid: "v",
          size: 10000 * X,
          free: 3000 * X,
          extentSize: X,
          extentCount: 10000,
          freeExtentCount: 3000,
          tags: ["pulumi-lvm"],
        },
      ],
      lvs,
    };
    const after = applyPlanEffects(inv, r);
    const vg = after.vgs[0]!;
    expect(vg.freeExtentCount).toBe(3000 - 5 - 5);
    const again = planThinPools({
      vg: "vg1",
      classes: [dc],
      lvs: after.lvs,
      geometry: {
        exact: true,
        extentSize: X,
        extentCount: vg.extentCount,
        freeExtents: vg.freeExtentCount,
      },
    });
    expect(again.actions).toEqual([]);
    expect(after.lvs.find((l) => l.name === "lvol0_pmspare")!.size).toBe(24 * MiB);
  });
});
