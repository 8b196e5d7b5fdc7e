import { estimateThinMetadataBytes, percentOfExtents, planThinPools, type VolumeGroupGeometry } from "./thin";
import { thinPoolLv } from "../../test/support/planner/testing";
import type { DeviceClass } from "../api";

const MiB = 1024 ** 2;
const GiB = 1024 ** 3;
const X = 4 * MiB;

describe("estimateThinMetadataBytes (lvm2's generic chunk size policy)", () => {
  test.each([
    [1 * GiB, undefined, 2 * MiB], // 16384 chunks × 64B = 1MiB, raised to the 2MiB minimum
    [100 * GiB, undefined, 100 * MiB], // 64KiB chunks
    [1024 * GiB, undefined, 128 * MiB], // chunk doubled to 512KiB to stay at 128MiB
    [1024 * GiB, 64 * 1024, 1024 * MiB], // a given chunk size is kept
    [1024 * 1024 * GiB, 64 * 1024, 16 * GiB], // clamped to 16GiB
  ])("%d bytes, chunk %s → %d", (data, chunk, expected) => {
    expect(estimateThinMetadataBytes(data, chunk)).toBe(expected);
  });
});

test("percentOfExtents rounds down like lvcreate, up like lvextend", () => {
  expect(percentOfExtents(51198, 90)).toBe(46078);
  expect(percentOfExtents(51198, 90, true)).toBe(46079);
  expect(percentOfExtents(100, 100)).toBe(100);
});

const thin = (percent: number, name = "pool0"): DeviceClass => ({
  name: `dc-${name}`,
  strategy: "Thin",
  volumeGroup: "vg1",
  thin: { poolName: name, sizePercent: percent, overprovisionRatio: 2 },
});
const exact = (extentCount: number, freeExtents = extentCount): VolumeGroupGeometry => ({
  exact: true,
  extentSize: X,
  extentCount,
  freeExtents,
});

describe("planThinPools", () => {
  test("two pools in one group: the spare is paid once, by the first", () => {
    const r = planThinPools({
      vg: "vg1",
      classes: [thin(50, "a"), thin(40, "b")],
      lvs: [],
      geometry: exact(10000),
    });
    // 50% of 10000 = 5000 extents (20GiB): metadata 20MiB = 5 extents, and a spare of 5.
    expect(r.actions.map((a) => a.argv.join(" "))).toEqual([
      "lvcreate --type thin-pool --name a --extents 5000 --poolmetadatasize 20m --zero y --addtag pulumi-lvm vg1",
      "lvcreate --type thin-pool --name b --extents 4000 --poolmetadatasize 16m --zero y --addtag pulumi-lvm vg1",
    ]);
    expect([...r.ready]).toEqual(["dc-a", "dc-b"]);
  });

  test("space taken by other volumes shrinks a new pool to what fits", () => {
    const r = planThinPools({ vg: "vg1", classes: [thin(90)], lvs: [], geometry: exact(10000, 5000) });
    expect(r.pools).toEqual([
      { name: "pool0", deviceClass: "dc-pool0", exists: false, targetExtents: 5000 - 9 - 9 },
    ]);
  });

  test("a pool that does not fit at all is blocked with the numbers", () => {
    const r = planThinPools({ vg: "vg1", classes: [thin(90)], lvs: [], geometry: exact(10000, 2) });
    expect(r.actions).toEqual([]);
    expect(r.blocked[0]!.reason).toBe(
      "thin pool vg1/pool0 does not fit: vg1 has 2 free extents (8Mi) and the pool needs at least 19 for data, metadata and spare",
    );
    expect(r.ready.size).toBe(0);
  });

  test("an existing spare as large as the new metadata is reused", () => {
    const spare = {
      name: "lvol0_pmspare",
      vgName: "vg1",
      uuid: "s",
      size: 9 * X,
      attr: "ewi-------",
      tags: [],
      hidden: true,
    };
    const r = planThinPools({ vg: "vg1", classes: [thin(90)], lvs: [spare], geometry: exact(10000, 9000) });
    expect(r.pools[0]).toMatchObject({ targetExtents: 9000 - 9 });
  });

  test("estimated geometry: lvm computes the percentage, unless it would not fit", () => {
    const estimated = { exact: false, extentSize: X, extentCount: 10000, freeExtents: 10000 };
    expect(
      planThinPools({ vg: "vg1", classes: [thin(90)], lvs: [], geometry: estimated }).actions[0]!.argv,
    ).toContain("90%VG");
    expect(
      planThinPools({ vg: "vg1", classes: [thin(100)], lvs: [], geometry: estimated }).actions[0]!.argv,
    ).toContain("100%FREE");
    const tight = planThinPools({
      vg: "vg1",
      classes: [thin(90)],
      lvs: [],
      geometry: { ...estimated, freeExtents: 8000 },
    });
    expect(tight.actions).toEqual([]);
    expect(tight.blocked[0]!.reason).toMatch(/^thin pool vg1\/pool0 is created by a later plan/);
    const grown = planThinPools({
      vg: "vg1",
      classes: [thin(100)],
      lvs: [thinPoolLv("vg1", "pool0", 5000)],
      geometry: { ...estimated, freeExtents: 4000 },
    });
    expect(grown.actions[0]!.argv).toEqual(["lvextend", "--extents", "+100%FREE", "vg1/pool0"]);
  });
});
