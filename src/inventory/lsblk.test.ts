import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { lsblkArgv, parseLsblk } from "./lsblk";

describe("parseLsblk on recorded output", () => {
  const plain = parseLsblk(loadRawFixture("host-loop-mixed").lsblk);
  const paths = parseLsblk(loadRawFixture("host-loop-mixed-paths").lsblk);

  it("gives the same devices with and without --paths", () => {
    expect(paths).toEqual(plain);
  });

  it("lists every loop device and both partitions, knames as /dev paths, sorted", () => {
    expect(plain.map((d) => d.kname)).toEqual([
      "/dev/loop0",
      "/dev/loop1",
      "/dev/loop2",
      "/dev/loop3",
      "/dev/loop4",
      "/dev/loop5",
      "/dev/loop5p1",
      "/dev/loop5p2",
      "/dev/loop6",
      "/dev/loop7",
      "/dev/loop8",
      "/dev/loop9",
    ]);
    for (const d of plain) expect(d.path).toBe(d.kname);
  });

  it("links partitions to their disk both ways", () => {
    const disk = plain.find((d) => d.children.length > 0)!;
    expect(disk.children).toEqual([`${disk.kname}p1`, `${disk.kname}p2`]);
    for (const child of disk.children) {
      const part = plain.find((d) => d.kname === child)!;
      expect(part).toMatchObject({ type: "part", parents: [disk.kname], children: [] });
    }
  });

  it("keeps mount points with spaces and [SWAP], and drops lsblk's [null]", () => {
    const mounted = plain.filter((d) => d.mountpoints.length > 0).map((d) => d.mountpoints);
    expect(mounted).toEqual([["/var/tmp/inv-fixtures/set/mnt/ext4 data"], ["[SWAP]"]]);
  });

  it("reads sizes in bytes and flags as booleans; without udev FSTYPE is empty", () => {
    const small = plain.find((d) => d.size === 256 * 1024 ** 2);
    expect(small).toBeDefined();
    expect(plain.filter((d) => d.readOnly).length).toBe(1);
    expect(plain.every((d) => d.removable === false && d.fstype === undefined)).toBe(true);
  });
});

describe("parseLsblk table cases", () => {
  const node = (over: Record<string, unknown>) => ({
    name: "sda",
    kname: "sda",
    type: "disk",
    size: 1000,
    ...over,
  });

  it("normalises knames to /dev paths and names dm devices /dev/mapper/<name> when PATH is missing", () => {
    const [disk, dm] = parseLsblk({
      blockdevices: [node({ children: [{ name: "vg0-data", kname: "dm-0", type: "lvm", size: 500 }] })],
    }).sort((a, b) => a.type.localeCompare(b.type));
    expect(disk).toMatchObject({ kname: "/dev/sda", path: "/dev/sda", children: ["/dev/dm-0"] });
    expect(dm).toMatchObject({ kname: "/dev/dm-0", path: "/dev/mapper/vg0-data", parents: ["/dev/sda"] });
  });

  it("prefers lsblk's PATH column", () => {
    const [d] = parseLsblk({
      blockdevices: [node({ name: "vg0-x", kname: "dm-3", type: "lvm", path: "/dev/mapper/vg0-x" })],
    });
    expect(d).toMatchObject({ kname: "/dev/dm-3", path: "/dev/mapper/vg0-x" });
  });

  it("merges a dm device printed under each of its two PVs", () => {
    const lv = { name: "vg0-big", kname: "dm-1", type: "lvm", size: 2000, mountpoints: ["/data"] };
    const devices = parseLsblk({
      blockdevices: [node({ children: [lv] }), node({ name: "sdb", kname: "sdb", children: [lv] })],
    });
    expect(devices.map((d) => d.kname)).toEqual(["/dev/dm-1", "/dev/sda", "/dev/sdb"]);
    expect(devices[0]).toMatchObject({ parents: ["/dev/sda", "/dev/sdb"], mountpoints: ["/data"] });
  });

  it("accepts the old all-strings form with a single mountpoint (util-linux < 2.37)", () => {
    const [d] = parseLsblk({
      blockdevices: [
        {
          name: "sdc",
          kname: "sdc",
          type: "disk",
          size: "1000204886016",
          ro: "0",
          rm: "1",
          rota: "1",
          mountpoint: "/boot",
          wwn: "0x5000C500A1B2C3D4",
          serial: "  ZA1 ",
        },
      ],
    });
    expect(d).toEqual({
      kname: "/dev/sdc",
      path: "/dev/sdc",
      type: "disk",
      size: 1000204886016,
      readOnly: false,
      removable: true,
      rotational: true,
      wwn: "0x5000c500a1b2c3d4",
      serial: "ZA1",
      mountpoints: ["/boot"],
      parents: [],
      children: [],
    });
  });

  it("takes PKNAME as a parent even outside the tree", () => {
    const [p] = parseLsblk({
      blockdevices: [node({ name: "sda1", kname: "sda1", type: "part", pkname: "sda" })],
    });
    expect(p!.parents).toEqual(["/dev/sda"]);
  });

  it.each([
    [null, 'expected {"blockdevices": [...]}'],
    [[], 'expected {"blockdevices": [...]}'],
    [{ blockdevices: 3 }, 'expected {"blockdevices": [...]}'],
    [{ blockdevices: ["sda"] }, "blockdevices[0]: "],
    [
      { blockdevices: [{ name: "sda", kname: "sda", type: "disk", size: "2G" }] },
      "blockdevices[0].size: must be a whole number",
    ],
    [{ blockdevices: [{ name: "sda", type: "disk", size: 1 }] }, "blockdevices[0].kname: is required"],
    [
      {
        blockdevices: [
          {
            name: "sda",
            kname: "sda",
            type: "disk",
            size: 1,
            children: [{}, { name: "x", type: "part", size: 1 }],
          },
        ],
      },
      "blockdevices[0].children[0].name: is required",
    ],
    [
      { blockdevices: [{ name: "sda", kname: "sda", type: "disk", size: 1, ro: "yes" }] },
      "blockdevices[0].ro: ",
    ],
  ])("rejects %j with %s", (input, message) => {
    expect(() => parseLsblk(input)).toThrow(message);
  });
});

describe("lsblkArgv", () => {
  it("asks for JSON in bytes with every column and paths, restricted to the given devices", () => {
    expect(lsblkArgv()).toEqual(["lsblk", "--json", "--bytes", "--output-all", "--paths"]);
    expect(lsblkArgv(["/dev/loop3"])).toEqual([
      "lsblk",
      "--json",
      "--bytes",
      "--output-all",
      "--paths",
      "/dev/loop3",
    ]);
  });
});
