import { loadRawFixture } from "../../test/fixtures/inventory/load";
import fc from "fast-check";
import {
  parseSysfs,
  SYSFS_ATTRIBUTES,
  SYSFS_VPD_UNIT_SERIAL_HEX,
  unitSerialFromVpd,
  wwnFromWwid,
} from "./sysfs";

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
    const known = new Set<string>([
      ...SYSFS_ATTRIBUTES.map((a) => a.name),
      SYSFS_VPD_UNIT_SERIAL_HEX,
      "holders",
    ]);
    for (const attrs of Object.values(sysfs))
      for (const key of Object.keys(attrs)) expect(known).toContain(key);
  });
});

describe("parseSysfs table cases", () => {
  it("takes the serial from `serial` (virtio) or `device/serial` (nvme), trimmed", () => {
    expect(parseSysfs({ serial: "SN-AAA111\n" }).serial).toBe("SN-AAA111");
    expect(parseSysfs({ "device/serial": "  S4EVNF0M123456  \n" }).serial).toBe("S4EVNF0M123456");
  });

  it("takes a SCSI disk's serial from its unit serial page when there is no serial file", () => {
    // recorded in the qemu guest: scsi-hd with serial=SN-BBB222
    expect(parseSysfs({ [SYSFS_VPD_UNIT_SERIAL_HEX]: "00800009534e2d424242323232" }).serial).toBe(
      "SN-BBB222",
    );
    expect(
      parseSysfs({ serial: "VIRTIO1\n", [SYSFS_VPD_UNIT_SERIAL_HEX]: "00800009534e2d424242323232" }).serial,
    ).toBe("VIRTIO1");
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

describe("unitSerialFromVpd", () => {
  const page = (serial: string, code = 0x80, length = serial.length) =>
    Buffer.concat([
      Buffer.from([0, code, length >> 8, length & 0xff]),
      Buffer.from(serial, "latin1"),
    ]).toString("hex");

  it.each([
    ["a serial", page("SN-BBB222"), "SN-BBB222"],
    ["space padding (right-aligned serials)", page("      Z1X2C3V4"), "Z1X2C3V4"],
    ["NUL padding", page("WD-123\0\0"), "WD-123"],
    ["inner spaces kept", page("ABC 123 "), "ABC 123"],
    ["uppercase hex", page("S1").toUpperCase(), "S1"],
    ["another page (0x83, device identification)", page("SN1", 0x83), undefined],
    ["a length past the end", page("SN1", 0x80, 9), undefined],
    ["shorter than the header", "0080", undefined],
    ["an empty serial", page(""), undefined],
    ["only padding", page("    "), undefined],
    ["a control character", page("SN\x01X"), undefined],
    ["a byte above ASCII", page("SN\xe9"), undefined],
    ["not hex", "zz80", undefined],
    ["odd hex", "00800", undefined],
    ["nothing", undefined, undefined],
  ])("%s", (_case, hex, expected) => {
    expect(unitSerialFromVpd(hex)).toBe(expected);
  });

  it("returns exactly the printable serial it was given, for any serial", () => {
    const printable = fc
      .string({
        unit: fc.integer({ min: 0x21, max: 0x7e }).map((c) => String.fromCharCode(c)),
        minLength: 1,
        maxLength: 64,
      })
      .filter((s) => s.length > 0);
    fc.assert(
      fc.property(printable, fc.nat({ max: 8 }), fc.nat({ max: 8 }), (serial, left, right) => {
        expect(unitSerialFromVpd(page(" ".repeat(left) + serial + " ".repeat(right)))).toBe(serial);
      }),
    );
  });
});
