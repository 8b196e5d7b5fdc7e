import { loadRawFixture } from "../../test/fixtures/inventory/load";
import { parseSysfs, SYSFS_ATTRIBUTES, wwnFromWwid } from "./sysfs";

describe("parseSysfs on recorded output", () => {
  const sysfs = loadRawFixture("host-loop-mixed").sysfs ?? {};

  it("reads a loop device: major:minor, flags, backing file, no holders", () => {
    const [kname, attrs] = Object.entries(sysfs).find(([, a]) =>
      a["loop/backing_file"]?.includes("/readonly-2g.img"),
    )!;
    expect(kname).toMatch(/^loop\d+$/);
    expect(parseSysfs(attrs)).toEqual({
      majMin: expect.stringMatching(/^7:\d+$/),
      readOnly: true,
      removable: false,
      rotational: true,
      backingFile: "/var/tmp/inv-fixtures/set/readonly-2g.img",
      holders: [],
    });
  });

  it("reads a partition, which has no queue/ or loop/ of its own", () => {
    const part = Object.entries(sysfs).find(([k]) => /\dp1$/.test(k))![1];
    expect(part.partition).toBe("1\n");
    expect(parseSysfs(part)).toEqual({
      majMin: expect.stringMatching(/^259:\d+$/),
      readOnly: false,
      holders: [],
    });
  });

  it("recorded only attributes discovery reads", () => {
    const known = new Set<string>([...SYSFS_ATTRIBUTES, "holders"]);
    for (const attrs of Object.values(sysfs))
      for (const key of Object.keys(attrs)) expect(known).toContain(key);
  });
});

describe("parseSysfs table cases", () => {
  it("takes the serial from `serial` (virtio) or `device/serial` (nvme), trimmed", () => {
    expect(parseSysfs({ serial: "SN-AAA111\n" }).serial).toBe("SN-AAA111");
    expect(parseSysfs({ "device/serial": "  S4EVNF0M123456  \n" }).serial).toBe("S4EVNF0M123456");
  });

  it("reads dm state and holders as /dev paths", () => {
    expect(parseSysfs({ "dm/name": "vg0-pool0\n", "dm/suspended": "1\n", holders: "dm-3 dm-4" })).toEqual({
      suspended: true,
      holders: ["/dev/dm-3", "/dev/dm-4"],
    });
  });

  it("names the attribute when a flag is not 0 or 1", () => {
    expect(() => parseSysfs({ ro: "yes\n" })).toThrow('ro: expected "0" or "1" (got "yes")');
  });
});

describe("wwnFromWwid", () => {
  it.each([
    ["naa.5000C500A1B2C3D4\n", "0x5000c500a1b2c3d4"],
    ["0x5000c500a1b2c3d4", "0x5000c500a1b2c3d4"],
    ["eui.0025388B91B2C3D4", "eui.0025388b91b2c3d4"],
    ["eui.e8238fa6bf530001001b448b45a2e4f1", "eui.e8238fa6bf530001001b448b45a2e4f1"],
    ["t10.ATA     QEMU HARDDISK                           QM00001", undefined],
    ["nvme.1b36-31323334-51454d55204e564d65204374726c-00000001", undefined],
    [undefined, undefined],
  ])("%j → %j", (wwid, wwn) => {
    expect(wwnFromWwid(wwid)).toBe(wwn);
  });
});
