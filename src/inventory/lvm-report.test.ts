import { readFileSync } from "node:fs";
import { join } from "node:path";
import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { fullreportArgv, parseLvAttr, parseLvmReport, splitTags } from "./lvm-report";
import { OWNER_TAG } from "./types";

const MiB = 1024 ** 2;

describe("parseLvmReport on recorded output", () => {
  const full = parseLvmReport(loadRawFixture("host-loop-mixed").lvm);
  const separate = parseLvmReport(loadRawFixture("host-loop-mixed-paths").lvm);

  it("reads the same PVs, VGs and LVs from `lvm fullreport` and from separate pvs/vgs/lvs reports", () => {
    expect(separate).toEqual(full);
  });

  it("finds the owned VG by its tag, its PVs with theirs, and the foreign VG without", () => {
    expect(full.vgs.map((vg) => [vg.name, vg.tags])).toEqual([
      ["inv-fixture-foreign", []],
      ["inv-fixture-owned", ["inv-fixture", OWNER_TAG]],
    ]);
    expect(full.pvs.map((pv) => [pv.vgName, pv.tags])).toEqual([
      ["inv-fixture-foreign", []],
      ["inv-fixture-owned", [OWNER_TAG]],
      ["inv-fixture-owned", [OWNER_TAG]],
    ]);
  });

  it("reads sizes and extent counts that add up", () => {
    for (const vg of full.vgs) {
      expect(vg.extentSize).toBe(4 * MiB);
      expect(vg.size).toBe(vg.extentCount * vg.extentSize);
      expect(vg.free).toBe(vg.freeExtentCount * vg.extentSize);
      const members = full.pvs.filter((pv) => pv.vgName === vg.name);
      expect(members.reduce((n, pv) => n + pv.size, 0)).toBe(vg.size);
      expect(members.reduce((n, pv) => n + pv.free, 0)).toBe(vg.free);
    }
  });

  it("reads the metadata-only LV: 8 MiB, inactive linear as far as lvm can tell without device-mapper", () => {
    expect(full.lvs).toEqual([
      {
        name: "lv1",
        vgName: "inv-fixture-owned",
        uuid: expect.any(String),
        size: 8 * MiB,
        attr: "-wi-XX----",
        tags: ["inv-fixture-lv"],
      },
    ]);
    expect(parseLvAttr(full.lvs[0]!.attr)).toMatchObject({
      volumeType: "linear",
      state: "unknown",
      active: undefined,
    });
  });

  it("gives orphan PVs (fullreport's element with no vg) an empty vgName", () => {
    const edge3 = parseLvmReport(loadRawFixture("host-loop-edge-3").lvm);
    const orphans = edge3.pvs.filter((pv) => pv.vgName === "");
    expect(orphans).toHaveLength(1);
    expect(orphans[0]!.size).toBe(1024 * MiB);
  });

  it("reads a PV on a partition", () => {
    const edge2 = parseLvmReport(loadRawFixture("host-loop-edge-2").lvm);
    expect(edge2.pvs.map((pv) => pv.device)).toEqual([expect.stringMatching(/^\/dev\/loop\d+p2$/)]);
    expect(edge2.lvs.map((lv) => [lv.vgName, lv.name, lv.size])).toEqual([
      ["inv-fixture-edge2-legacy", "home", 64 * MiB],
    ]);
  });
});

describe("parseLvmReport table cases", () => {
  // Rows as lvs printed them inside a qemu guest with device-mapper (docs: machine-facts.md).
  const pool = {
    lv_name: "pool0",
    vg_name: "vg0",
    lv_uuid: "u1",
    lv_attr: "twi-aotz--",
    lv_size: "1916796928",
    pool_lv: "",
    data_percent: "0.00",
    metadata_percent: "11.04",
    lv_tags: "",
  };
  const thin = {
    ...pool,
    lv_name: "thin1",
    lv_uuid: "u2",
    lv_attr: "Vwi-a-tz--",
    lv_size: "5368709120",
    pool_lv: "pool0",
    data_percent: "12.50",
    metadata_percent: "",
  };
  const tdata = {
    ...pool,
    lv_name: "[pool0_tdata]",
    lv_uuid: "u3",
    lv_attr: "Twi-ao----",
    data_percent: "",
    metadata_percent: "",
  };
  const vg = {
    vg_name: "vg0",
    vg_uuid: "v",
    vg_size: "2143289344",
    vg_free: "0",
    vg_extent_size: "4194304",
    vg_extent_count: "511",
    vg_free_count: "0",
    vg_tags: "pulumi-lvm",
  };
  const pv = {
    pv_name: "/dev/vdb",
    pv_uuid: "p",
    vg_name: "vg0",
    pv_size: "2143289344",
    pv_free: "0",
    pv_tags: "",
  };
  const separate = (over: Record<string, unknown> = {}) => ({
    pvs: { report: [{ pv: [pv] }] },
    vgs: { report: [{ vg: [vg] }] },
    lvs: { report: [{ lv: [thin, tdata, pool] }] },
    ...over,
  });

  it("parses data/metadata percentages, pool_lv, and marks bracketed LVs hidden", () => {
    expect(parseLvmReport(separate()).lvs).toEqual([
      {
        name: "pool0",
        vgName: "vg0",
        uuid: "u1",
        size: 1916796928,
        attr: "twi-aotz--",
        dataPercent: 0,
        metadataPercent: 11.04,
        tags: [],
      },
      {
        name: "pool0_tdata",
        vgName: "vg0",
        uuid: "u3",
        size: 1916796928,
        attr: "Twi-ao----",
        tags: [],
        hidden: true,
      },
      {
        name: "thin1",
        vgName: "vg0",
        uuid: "u2",
        size: 5368709120,
        attr: "Vwi-a-tz--",
        poolLv: "pool0",
        dataPercent: 12.5,
        tags: [],
      },
    ]);
  });

  it("accepts numbers as JSON numbers (--reportformat json_std) and a trailing B", () => {
    const report = separate({
      vgs: { report: [{ vg: [{ ...vg, vg_size: 2143289344, vg_extent_count: 511, vg_free: "0B" }] }] },
    });
    expect(parseLvmReport(report).vgs[0]).toMatchObject({ size: 2143289344, extentCount: 511, free: 0 });
  });

  it("takes the VG of fullreport rows from their element", () => {
    const { vg_name: _a, ...pvRow } = pv;
    const { vg_name: _b, ...lvRow } = pool;
    const report = parseLvmReport({
      report: [
        { vg: [vg], pv: [pvRow], lv: [lvRow], pvseg: [], seg: [] },
        { vg: [], pv: [{ ...pvRow, pv_name: "/dev/vdc", pv_uuid: "q" }] },
      ],
    });
    expect(report.pvs.map((p) => [p.device, p.vgName])).toEqual([
      ["/dev/vdb", "vg0"],
      ["/dev/vdc", ""],
    ]);
    expect(report.lvs.map((l) => l.vgName)).toEqual(["vg0"]);
  });

  it.each<[string, unknown, string]>([
    [
      "not a report",
      { foo: 1 },
      'expected {"report": [...]} (lvm fullreport) or {"pvs": ..., "vgs": ..., "lvs": ...}',
    ],
    ["null", null, 'expected {"report": [...]}'],
    [
      "pvs without tags (run pvs -o +pv_tags)",
      separate({ pvs: { report: [{ pv: [{ ...pv, pv_tags: undefined }] }] } }),
      "pvs.report[0].pv[0].pv_tags: is required",
    ],
    [
      "a vgs report passed as pvs",
      separate({ pvs: { report: [{ vg: [vg] }] } }),
      'pvs.report: expected {"pv": [...]} entries',
    ],
    [
      "a size with units",
      separate({ vgs: { report: [{ vg: [{ ...vg, vg_size: "2.00g" }] }] } }),
      'vgs.report[0].vg[0].vg_size: must be a whole number of bytes or units (got "2.00g")',
    ],
    [
      "a bad percentage",
      separate({ lvs: { report: [{ lv: [{ ...pool, data_percent: "n/a" }] }] } }),
      "lvs.report[0].lv[0].data_percent: must be a percentage",
    ],
    [
      "an LV outside any VG",
      { report: [{ vg: [], lv: [pool] }] },
      "report[0].lv[0]: a logical volume outside any volume group",
    ],
    [
      "lvs rows without vg_name",
      separate({ lvs: { report: [{ lv: [{ ...pool, vg_name: "" }] }] } }),
      "lvs.report[0].lv[0].vg_name: is required",
    ],
  ])("rejects %s", (_what, input, message) => {
    expect(() => parseLvmReport(input)).toThrow(message);
  });
});

describe("splitTags", () => {
  it.each([
    ["", []],
    ["pulumi-lvm", ["pulumi-lvm"]],
    ["inv-fixture,pulumi-lvm", ["inv-fixture", "pulumi-lvm"]],
    ["a, b,", ["a", "b"]],
  ])("%j → %j", (tags, expected) => {
    expect(splitTags(tags)).toEqual(expected);
  });
});

describe("fullreportArgv", () => {
  it("asks for JSON in bytes without suffixes, restricted with --devices when given", () => {
    expect(fullreportArgv()).toEqual([
      "lvm",
      "fullreport",
      "--reportformat",
      "json",
      "--units",
      "b",
      "--nosuffix",
    ]);
    expect(fullreportArgv(["/dev/loop3", "/dev/loop4"]).slice(-2)).toEqual([
      "--devices",
      "/dev/loop3,/dev/loop4",
    ]);
  });
});

describe("thin pool metadata size and chunk size", () => {
  it("reads lv_metadata_size and the pool segment's chunk_size from a fullreport recorded in the qemu guest", () => {
    const guest = JSON.parse(
      readFileSync(join(__dirname, "../../test/fixtures/inventory/guest-thin-paths.json"), "utf8"),
    ) as { lvm: unknown };
    const lvs = parseLvmReport(guest.lvm).lvs;
    // lvm2 2.03.16 made pool0 (457 extents of 4MiB) with its default: 64KiB chunks, 64 bytes per
    // chunk (1.8MiB), at least 2MiB, rounded up to one extent.
    expect(lvs.find((l) => l.name === "pool0")).toMatchObject({
      attr: "twi-aotz--",
      size: 1916796928,
      metadataSize: 4194304,
      chunkSize: 65536,
    });
    // thin volumes have neither (their chunk_size is "0", lv_metadata_size "")
    for (const lv of lvs.filter((l) => l.name !== "pool0")) {
      expect(lv.metadataSize).toBeUndefined();
      expect(lv.chunkSize).toBeUndefined();
    }
  });

  it.each([
    ["4194304", "65536", { metadataSize: 4194304, chunkSize: 65536 }],
    ["", "", {}],
    [undefined, undefined, {}],
    [96468992, 262144, { metadataSize: 96468992, chunkSize: 262144 }],
  ])("separate lvs report: lv_metadata_size %j, chunk_size %j", (meta, chunk, expected) => {
    const row = {
      lv_name: "pool0",
      vg_name: "vg0",
      lv_uuid: "u1",
      lv_size: "1916796928",
      lv_attr: "twi-aotz--",
      pool_lv: "",
      data_percent: "0.00",
      metadata_percent: "11.04",
      lv_tags: "",
      ...(meta === undefined ? {} : { lv_metadata_size: meta }),
      ...(chunk === undefined ? {} : { chunk_size: chunk }),
    };
    const lv = parseLvmReport({
      pvs: { report: [{ pv: [] }] },
      vgs: { report: [{ vg: [] }] },
      lvs: { report: [{ lv: [row] }] },
    }).lvs[0]!;
    expect({ metadataSize: lv.metadataSize, chunkSize: lv.chunkSize }).toEqual({
      metadataSize: undefined,
      chunkSize: undefined,
      ...expected,
    });
  });

  it("rejects a metadata size that is not a byte count", () => {
    const report = {
      report: [
        {
          vg: [
            {
              vg_name: "vg0",
              vg_uuid: "v",
              vg_size: "0",
              vg_free: "0",
              vg_extent_size: "4194304",
              vg_extent_count: "0",
              vg_free_count: "0",
              vg_tags: "",
            },
          ],
          lv: [
            {
              lv_name: "p",
              lv_uuid: "u",
              lv_size: "0",
              lv_attr: "twi-a-tz--",
              lv_metadata_size: "4.0m",
              lv_tags: "",
            },
          ],
        },
      ],
    };
    expect(() => parseLvmReport(report)).toThrow(/lv_metadata_size/);
  });
});
