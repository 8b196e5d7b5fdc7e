import { planThinPools, type VolumeGroupGeometry } from "./thin";
import { thinPoolLv } from "../../test/support/planner/testing";
import type { DeviceClass } from "../api";
import type { LogicalVolume } from "../inventory/types";

// Settings of an existing thin pool that lvm cannot change (chunk size; shrinking data or metadata)
// appear as blocked with the reason and what to do; what lvm can do (grow metadata) is a step.

const KiB = 1024;
const MiB = 1024 ** 2;
const X = 4 * MiB;

const dc = (thin: Partial<NonNullable<DeviceClass["thin"]>>): DeviceClass => ({
  name: "fast",
  strategy: "Thin",
  volumeGroup: "vg1",
  thin: { poolName: "pool0", sizePercent: 60, overprovisionRatio: 10, ...thin },
});
const pool = (extents: number, metadataBytes = 24 * MiB, chunk = 64 * KiB): LogicalVolume => ({
  ...thinPoolLv("vg1", "pool0", extents, X),
  metadataSize: metadataBytes,
  chunkSize: chunk,
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
// 10000 extents; a 6000-extent pool (60%) with 24MiB metadata and spare: 3988 free.
const geometry: VolumeGroupGeometry = { exact: true, extentSize: X, extentCount: 10000, freeExtents: 3988 };
const plan = (thin: Partial<NonNullable<DeviceClass["thin"]>>, lvs = [pool(6000), spare(24 * MiB)]) =>
  planThinPools({ vg: "vg1", classes: [dc(thin)], lvs, geometry });

describe("planThinPools: settings of an existing pool", () => {
  test.each([
    ["the same settings", {}, [], [], null],
    ["the same chunkSize, written out", { chunkSize: "64Ki" }, [], [], null],
    [
      "a new chunkSize",
      { chunkSize: "256Ki" },
      [],
      [
        "thin pool vg1/pool0 of device class fast has 64Ki chunks and chunkSize asks for 256Ki: lvm cannot change the chunk size of an existing pool. Set chunkSize to 64Ki (or leave it out) to keep the pool, or create a new pool (a new poolName) and move the volumes to it",
      ],
      null,
    ],
    // Not blocked: a group that lost a disk leaves its pool above its share just the same, and the
    // plan cannot tell the two apart (the guest's shrink case); the pool keeps its size.
    ["a lower sizePercent", { sizePercent: 40 }, [], [], null],
    [
      "a larger metadataSize: lvm grows pool metadata, so it is a step",
      { metadataSize: "64Mi" },
      [
        [
          "lvextend-thinpool-metadata",
          `lvextend --poolmetadatasize ${64 * MiB}b vg1/pool0`,
          "grow the metadata of thin pool vg1/pool0 of device class fast from 24Mi to 64Mi, its metadataSize",
        ],
      ],
      [],
      null,
    ],
    // lvm cannot shrink metadata; a metadataSize below the pool's is a floor that is already met
    ["a smaller metadataSize", { metadataSize: "8Mi" }, [], [], null],
  ] as const)("%s", (_name, thin, steps, blocked, lvs) => {
    const r = plan(thin, lvs ? [...lvs] : undefined);
    expect(r.actions.map((a) => [a.op, a.argv.join(" "), a.reason])).toEqual(steps);
    expect(r.blocked.map((b) => b.reason)).toEqual(blocked);
    expect(r.blocked.every((b) => b.volumeGroup === "vg1")).toBe(true);
    // the pool stays usable for its volumes whatever is blocked
    expect([...r.ready]).toEqual(["fast"]);
  });

  test("a larger metadataSize with no room for it and its spare: blocked with the numbers", () => {
    const r = planThinPools({
      vg: "vg1",
      classes: [dc({ metadataSize: "64Mi" })],
      lvs: [pool(6000), spare(24 * MiB)],
      geometry: { ...geometry, freeExtents: 5 },
    });
    expect(r.actions).toEqual([]);
    expect(r.blocked.map((b) => b.reason)).toEqual([
      "thin pool vg1/pool0's metadata (24Mi) is smaller than its metadataSize 64Mi, and vg1 has 5 free extents where growing it needs 20 (metadata and spare)",
    ]);
  });

  test("with the group's size not yet known (its devices change in this plan), a new chunkSize is blocked too", () => {
    const r = planThinPools({
      vg: "vg1",
      classes: [dc({ chunkSize: "128Ki" })],
      lvs: [pool(6000), spare(24 * MiB)],
      geometry: { ...geometry, exact: false },
    });
    expect(r.blocked.map((b) => b.reason.split(":")[0])).toEqual([
      "thin pool vg1/pool0 of device class fast has 64Ki chunks and chunkSize asks for 128Ki",
    ]);
  });
});
