import fc from "fast-check";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { deviceByRole, HOST_LOOP_FIXTURES, loadRawFixture } from "../../test/fixtures/inventory/load";
import { parseNodeInventory } from "./parse";
import { OWNER_TAG, type RawNodeInventory } from "./types";

const GiB = 1024 ** 3;
const MiB = 1024 ** 2;

describe("parseNodeInventory on the recorded fixtures", () => {
  it.each(HOST_LOOP_FIXTURES)("%s parses, every device probed", (name) => {
    const inv = parseNodeInventory(loadRawFixture(name));
    expect(inv.devices.length).toBeGreaterThan(3);
    expect(inv.devices.every((d) => d.probed === true && d.probeError === undefined)).toBe(true);
  });

  it("gives the same inventory from plain lsblk + fullreport as from lsblk --paths + pvs/vgs/lvs", () => {
    expect(parseNodeInventory(loadRawFixture("host-loop-mixed-paths"))).toEqual(
      parseNodeInventory(loadRawFixture("host-loop-mixed")),
    );
  });

  describe("host-loop-mixed", () => {
    const inv = parseNodeInventory(loadRawFixture("host-loop-mixed"));
    const role = (r: string) => deviceByRole(inv, r);

    it("has blank disks with no signatures, nothing on top and nothing mounted", () => {
      for (const [r, size] of [
        ["blank-2g", 2 * GiB],
        ["blank-4g", 4 * GiB],
        ["small-256m", 256 * MiB],
      ] as const) {
        expect(role(r)).toMatchObject({
          type: "loop",
          size,
          signatures: [],
          children: [],
          mountpoints: [],
          readOnly: false,
          probed: true,
        });
      }
    });

    it("sees the mounted ext4 by probing, although lsblk printed no FSTYPE", () => {
      const raw = loadRawFixture("host-loop-mixed").lsblk as { blockdevices: { fstype: unknown }[] };
      expect(raw.blockdevices.every((d) => d.fstype === null)).toBe(true);
      expect(role("ext4-1g")).toMatchObject({
        signatures: [{ type: "ext4", label: "inv-data", usage: "filesystem" }],
        mountpoints: ["/var/tmp/inv-fixtures/set/mnt/ext4 data"],
      });
    });

    it("sees the active swap as [SWAP] with its signature", () => {
      expect(role("swap-1g")).toMatchObject({
        signatures: [{ type: "swap", label: "inv-swap" }],
        mountpoints: ["[SWAP]"],
      });
    });

    it("links the GPT disk and its labelled partitions", () => {
      const disk = role("gpt-2g");
      expect(disk.signatures.map((s) => s.type)).toEqual(["PMBR", "gpt", "gpt"]);
      const parts = disk.children.map((k) => inv.devices.find((d) => d.kname === k)!);
      expect(parts.map((p) => [p.type, p.partlabel, p.parent, p.signatures])).toEqual([
        ["part", "EFI System", disk.kname, []],
        ["part", "data", disk.kname, []],
      ]);
      expect(parts[0]!.parttype).toBe("c12a7328-f81f-11d2-ba4b-00a0c93ec93b");
      expect(parts[0]!.size + parts[1]!.size).toBeLessThan(disk.size);
    });

    it("marks the read-only loop read-only", () => {
      expect(role("readonly-2g")).toMatchObject({ readOnly: true, signatures: [] });
    });

    it("matches PVs to devices by path and to VGs by name, owned by tag", () => {
      const foreign = role("foreign-pv-2g");
      expect(foreign.signatures).toEqual([expect.objectContaining({ type: "LVM2_member", usage: "raid" })]);
      const pvOf = (kname: string) => inv.pvs.find((pv) => pv.device === kname)!;
      expect(pvOf(foreign.kname)).toMatchObject({
        vgName: "inv-fixture-foreign",
        tags: [],
        uuid: foreign.signatures[0]!.uuid,
      });
      for (const r of ["owned-pv-2g", "owned-pv-3g"])
        expect(pvOf(role(r).kname)).toMatchObject({ vgName: "inv-fixture-owned", tags: [OWNER_TAG] });
      expect(inv.vgs.find((vg) => vg.tags.includes(OWNER_TAG))?.name).toBe("inv-fixture-owned");
      expect(inv.lvs.map((lv) => `${lv.vgName}/${lv.name}`)).toEqual(["inv-fixture-owned/lv1"]);
    });

    it("reads what only sysfs knows: backing files; loops have no serial and no wwn", () => {
      expect(
        inv.devices
          .filter((d) => d.type === "loop")
          .every((d) => d.backingFile?.startsWith("/var/tmp/inv-fixtures/set/")),
      ).toBe(true);
      expect(
        inv.devices.some((d) => d.serial !== undefined || d.wwn !== undefined || d.symlinks.length > 0),
      ).toBe(false);
    });
  });

  it("examples/sample-inventory.json holds the three edge recordings", () => {
    const sample = JSON.parse(
      readFileSync(join(__dirname, "../../examples/sample-inventory.json"), "utf8"),
    ) as { nodes: RawNodeInventory[] };
    expect(sample.nodes.map((n) => [n.name, n.labels?.["topology.kubernetes.io/zone"]])).toEqual([
      ["edge-1", "zone-a"],
      ["edge-2", "zone-a"],
      ["edge-3", "zone-b"],
    ]);
    expect(sample.nodes).toEqual([
      loadRawFixture("host-loop-edge-1"),
      loadRawFixture("host-loop-edge-2"),
      loadRawFixture("host-loop-edge-3"),
    ]);
  });

  it("host-loop-edge-2: a PV on a partition, an inactive swap disk", () => {
    const inv = parseNodeInventory(loadRawFixture("host-loop-edge-2"));
    const data = inv.devices.find((d) => d.partlabel === "data")!;
    expect(data.signatures.map((s) => s.type)).toEqual(["LVM2_member"]);
    expect(inv.pvs.map((pv) => [pv.device, pv.vgName])).toEqual([[data.kname, "inv-fixture-edge2-legacy"]]);
    expect(deviceByRole(inv, "swap-512m")).toMatchObject({ signatures: [{ type: "swap" }], mountpoints: [] });
  });

  it("host-loop-edge-3: an empty DOS label, an orphan PV, an unmounted old filesystem", () => {
    const inv = parseNodeInventory(loadRawFixture("host-loop-edge-3"));
    expect(deviceByRole(inv, "dos-2g")).toMatchObject({
      signatures: [{ type: "dos", usage: "partition-table" }],
      children: [],
    });
    const orphan = deviceByRole(inv, "orphan-pv-1g");
    expect(inv.pvs.find((pv) => pv.device === orphan.kname)).toMatchObject({ vgName: "" });
    expect(deviceByRole(inv, "ext4-2g")).toMatchObject({
      signatures: [{ type: "ext4", label: "old-data" }],
      mountpoints: [],
    });
  });
});

/** A small raw inventory in the recorded formats, for table cases. */
function raw(over: Partial<RawNodeInventory> = {}): RawNodeInventory {
  const dev = (name: string, majMin: string, extra: Record<string, unknown> = {}) => ({
    name,
    kname: name,
    "maj:min": majMin,
    type: "disk",
    size: 1000 * GiB,
    ro: false,
    rm: false,
    rota: false,
    serial: null,
    wwn: null,
    mountpoints: [null],
    ...extra,
  });
  return {
    name: "n1",
    lsblk: {
      blockdevices: [
        dev("sda", "8:0", { children: [dev("sda1", "8:1", { type: "part", size: GiB, pkname: "sda" })] }),
        dev("sdb", "8:16", {
          serial: "ZA1",
          children: [dev("vg0-pool0", "253:0", { kname: "dm-0", type: "lvm" })],
        }),
        dev("sdc", "8:32"),
      ],
    },
    lvm: null,
    probed: ["/dev/sda", "/dev/sda1", "/dev/sdb", "/dev/sdc"],
    ...over,
  };
}

describe("parseNodeInventory combining the sources", () => {
  const find = (r: RawNodeInventory, kname: string) =>
    parseNodeInventory(r).devices.find((d) => d.kname === kname)!;

  it("attaches wipefs signatures whether the device is printed as loop3 or /dev/loop3, without duplicates", () => {
    const sig = { offset: "0x218", type: "LVM2_member", uuid: "u", label: null };
    const r = raw({
      signatures: [
        { device: "sdc", ...sig },
        { device: "/dev/sdc", ...sig },
        { device: "sda1", offset: "0x438", type: "ext4" },
      ],
    });
    expect(find(r, "/dev/sdc").signatures).toEqual([{ type: "LVM2_member", offset: "0x218", uuid: "u" }]);
    expect(find(r, "/dev/sda1").signatures).toEqual([{ type: "ext4", offset: "0x438" }]);
    expect(find(r, "/dev/sda").signatures).toEqual([]);
  });

  it("ignores probes of devices lsblk does not list", () => {
    expect(() =>
      parseNodeInventory(
        raw({ signatures: [{ device: "vda", offset: "0x0", type: "xfs" }], sysfs: { vda: { ro: "0\n" } } }),
      ),
    ).not.toThrow();
  });

  it("takes serial, wwn and model from sysfs when lsblk has none, and keeps lsblk's when it has them", () => {
    const sysfs = {
      sdc: { serial: "SN-AAA111\n", wwid: "naa.5000C500A1B2C3D4\n", "device/model": "QEMU HARDDISK   \n" },
      sdb: { "device/serial": "other\n" },
    };
    expect(find(raw({ sysfs }), "/dev/sdc")).toMatchObject({
      serial: "SN-AAA111",
      wwn: "0x5000c500a1b2c3d4",
      model: "QEMU HARDDISK",
    });
    expect(find(raw({ sysfs }), "/dev/sdb").serial).toBe("ZA1");
  });

  it("adds udev links, resolving relative targets, and matches mounts made through a link", () => {
    const links = {
      "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4": "../../sdc",
      "/dev/disk/by-uuid/abc": "/dev/sdc",
      "/dev/disk/by-id/other": "../../vda",
    };
    const r = raw({ links, mounts: "/dev/disk/by-uuid/abc /srv ext4 rw 0 0\n" });
    expect(find(r, "/dev/sdc")).toMatchObject({
      symlinks: ["/dev/disk/by-id/wwn-0x5000c500a1b2c3d4", "/dev/disk/by-uuid/abc"],
      mountpoints: ["/srv"],
    });
  });

  it("matches mountinfo by major:minor, and /proc/swaps by path, merging with lsblk's own", () => {
    const mounts = "44 27 8:1 / /boot\\040efi rw - vfat /dev/root rw\n";
    const swaps = "Filename Type Size Used Priority\n/dev/sdc partition 1 0 -2\n";
    expect(find(raw({ mounts, swaps }), "/dev/sda1").mountpoints).toEqual(["/boot efi"]);
    expect(find(raw({ mounts, swaps }), "/dev/sdc").mountpoints).toEqual(["[SWAP]"]);
  });

  it("names dm devices /dev/mapper/<name>, reads suspension, and links holders as children", () => {
    const sysfs = { "dm-0": { "dm/suspended": "1\n", "dm/name": "vg0-pool0\n" }, sdc: { holders: "dm-0" } };
    const r = raw({ sysfs, mounts: "/dev/mapper/vg0-pool0 /data xfs rw 0 0\n" });
    expect(find(r, "/dev/dm-0")).toMatchObject({
      path: "/dev/mapper/vg0-pool0",
      parent: "/dev/sdb",
      suspended: true,
      mountpoints: ["/data"],
    });
    expect(find(r, "/dev/sdb").children).toEqual(["/dev/dm-0"]);
    expect(find(r, "/dev/sdc").children).toEqual(["/dev/dm-0"]);
  });

  it("reports devices wipefs did not run on, or failed on, as not probed", () => {
    const r = raw({
      probed: ["/dev/sda"],
      probeErrors: { "/dev/sdc": "wipefs --json --no-act /dev/sdc: exit status 1: Device or resource busy" },
    });
    expect(find(r, "/dev/sdb")).toMatchObject({ probed: false, signatures: [] });
    expect(find(r, "/dev/sdc")).toMatchObject({
      probed: false,
      probeError: expect.stringContaining("Device or resource busy"),
    });
    expect(find(raw({ probed: undefined }), "/dev/sda").probed).toBe(false);
    const failedBlkid = raw({ probeErrors: { "/dev/sda": "blkid -p -o export /dev/sda: exit status 4" } });
    expect(find(failedBlkid, "/dev/sda")).toMatchObject({
      probed: false,
      probeError: "blkid -p -o export /dev/sda: exit status 4",
    });
  });

  it("adds a signature blkid saw that wipefs did not list, and takes partition names from blkid", () => {
    const blkid = {
      "/dev/sdc": "DEVNAME=/dev/sdc\nTYPE=xfs\nUSAGE=filesystem\n",
      "/dev/sda1": "PART_ENTRY_NAME=EFI\\ System\nPART_ENTRY_TYPE=c12a\n",
    };
    expect(find(raw({ blkid }), "/dev/sdc").signatures).toEqual([{ type: "xfs", usage: "filesystem" }]);
    expect(find(raw({ blkid }), "/dev/sda1")).toMatchObject({
      partlabel: "EFI System",
      parttype: "c12a",
      signatures: [],
    });
  });

  it("gives empty PV/VG/LV lists when lvm is absent (lvm: null), and defaults labels to {}", () => {
    expect(parseNodeInventory(raw())).toMatchObject({ node: "n1", labels: {}, pvs: [], vgs: [], lvs: [] });
  });
});

describe("parseNodeInventory errors name the node and the part", () => {
  it.each<[string, unknown, string]>([
    [
      "lsblk of the wrong shape",
      raw({ lsblk: { devices: [] } }),
      'node "n1": lsblk: expected {"blockdevices": [...]}',
    ],
    ["lsblk missing", { ...raw(), lsblk: undefined }, 'node "n1": lsblk: expected {"blockdevices": [...]}'],
    [
      "a bad lsblk field",
      raw({ lsblk: { blockdevices: [{ name: "sda", kname: "sda", type: "disk", size: -1 }] } }),
      'node "n1": lsblk: blockdevices[0].size: must be a whole number',
    ],
    [
      "lvm of the wrong shape",
      raw({ lvm: [] }),
      'node "n1": lvm: expected {"report": [...]} (lvm fullreport) or {"pvs": ..., "vgs": ..., "lvs": ...}',
    ],
    [
      "signatures not a list",
      raw({ signatures: {} as unknown as unknown[] }),
      'node "n1": signatures: must be a array (got an object)',
    ],
    [
      "a signature without type",
      raw({ signatures: [{ device: "sda" }] }),
      'node "n1": signatures: [0].type: is required',
    ],
    [
      "a bad sysfs flag",
      raw({ sysfs: { sdc: { ro: "2\n" } } }),
      'node "n1": sysfs: sdc: ro: expected "0" or "1" (got "2")',
    ],
    [
      "sysfs values not strings",
      raw({ sysfs: { sdc: { ro: 0 } } as never }),
      'node "n1": sysfs: sdc.ro: must be a string (got 0)',
    ],
    [
      "unreadable mounts",
      raw({ mounts: "what is this\n" }),
      'node "n1": mounts: line 1: expected a mountinfo or /proc/mounts line',
    ],
    [
      "labels not strings",
      raw({ labels: { zone: 1 } as never }),
      'node "n1": labels: zone: must be a string (got 1)',
    ],
    ["no name", { ...raw(), name: "" }, 'node "(unnamed)": name: '],
    ["not an object", "lsblk output", 'node "(unnamed)": inventory: expected a raw node inventory object'],
  ])("%s", (_what, input, message) => {
    expect(() => parseNodeInventory(input as RawNodeInventory)).toThrow(message);
  });
});

describe("parseNodeInventory does not depend on the order the tools printed things in", () => {
  /** Deterministic Fisher–Yates from a seed. */
  const shuffler = (seed: number) => {
    let a = seed >>> 0;
    const next = () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = Math.imul(a ^ (a >>> 15), a | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    return <T>(xs: readonly T[]): T[] => {
      const out = [...xs];
      for (let i = out.length - 1; i > 0; i--) {
        const j = Math.floor(next() * (i + 1));
        [out[i], out[j]] = [out[j]!, out[i]!];
      }
      return out;
    };
  };

  /** Every array shuffled, recursively (lsblk trees, wipefs entries, lvm rows), and every object's keys. */
  const shuffleDeep = (value: unknown, shuffle: <T>(xs: readonly T[]) => T[]): unknown => {
    if (Array.isArray(value)) return shuffle(value.map((v) => shuffleDeep(v, shuffle)));
    if (typeof value === "object" && value !== null) {
      return Object.fromEntries(shuffle(Object.entries(value)).map(([k, v]) => [k, shuffleDeep(v, shuffle)]));
    }
    return value;
  };

  const shuffleLines = (
    text: string | undefined,
    shuffle: <T>(xs: readonly T[]) => T[],
    keepHeader: boolean,
  ) => {
    if (text === undefined) return undefined;
    const lines = text.split("\n").filter(Boolean);
    const head = keepHeader ? lines.slice(0, 1) : [];
    return [...head, ...shuffle(lines.slice(head.length))].map((l) => `${l}\n`).join("");
  };

  it.each(HOST_LOOP_FIXTURES)("%s", (name) => {
    const original = loadRawFixture(name);
    const expected = parseNodeInventory(original);
    expect(expected.devices.map((d) => d.kname)).toEqual(
      [...expected.devices.map((d) => d.kname)].sort((a, b) => a.localeCompare(b, "en", { numeric: true })),
    );
    fc.assert(
      fc.property(fc.integer(), (seed) => {
        const shuffle = shuffler(seed);
        const shuffled = {
          ...(shuffleDeep(original, shuffle) as RawNodeInventory),
          name: original.name,
          mounts: shuffleLines(original.mounts, shuffle, false),
          swaps: shuffleLines(original.swaps, shuffle, true),
        };
        expect(parseNodeInventory(shuffled)).toEqual(expected);
      }),
      { numRuns: 50 },
    );
  });
});
