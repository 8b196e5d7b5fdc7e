/**
 * The pure parts of test/vm/guest.ts (disk validation, qemu device arguments) and its loud failure when
 * the tier is not installed. Fast: no guest is started.
 */
import * as os from "node:os";
import * as path from "node:path";
import { diskArgs, initHash, kernelVersion, requireVmArtifacts, startGuest, validateDisks } from "./guest";

const GiB = 1024 ** 3;

describe("validateDisks", () => {
  test.each([
    [{ sizeBytes: 1000, serial: "A" }, /disks\[0\]\.sizeBytes must be a positive multiple of 512/],
    [{ sizeBytes: GiB, serial: "has space" }, /disks\[0\]\.serial must be 1-20 characters/],
    [{ sizeBytes: GiB, serial: "x".repeat(21) }, /disks\[0\]\.serial must be 1-20 characters/],
    [
      { sizeBytes: GiB, serial: "pl-system" },
      /disks\[0\]\.serial pl-system is used twice \(or is reserved\)/,
    ],
    [
      { sizeBytes: GiB, serial: "A", wwn: "5000c500a1b2c3d4" },
      /disks\[0\]\.wwn must be 0x followed by 16 hex digits/,
    ],
    [
      { sizeBytes: GiB, serial: "A", model: "a,drive=evil" },
      /disks\[0\]\.model must be at most 16 characters/,
    ],
    [
      { sizeBytes: GiB, serial: "A", vendor: "TOOLONGVENDOR" },
      /disks\[0\]\.vendor must be at most 8 characters/,
    ],
    [{ sizeBytes: GiB, serial: "A", bus: "virtio" as const, wwn: "0x5000c500a1b2c3d4" }, /need bus "scsi"/],
  ])("%j is refused", (disk, message) => {
    expect(() => validateDisks([disk])).toThrow(message);
  });

  test("duplicate serials are refused with the second disk's path", () => {
    expect(() =>
      validateDisks([
        { sizeBytes: GiB, serial: "SN-1" },
        { sizeBytes: GiB, serial: "SN-1" },
      ]),
    ).toThrow("disks[1].serial SN-1 is used twice");
  });
});

describe("diskArgs", () => {
  test("virtio-blk with a serial; scsi-hd with serial, WWN, vendor and product; in attach order", () => {
    const args = diskArgs("/r/system.img", [
      { sizeBytes: GiB, serial: "SN-A", image: "/r/a.img" },
      {
        sizeBytes: GiB,
        serial: "SN-B",
        wwn: "0x5000C500A1B2C3D4",
        vendor: "PLVM",
        model: "PL DISK",
        image: "/r/b.img",
      },
      { sizeBytes: GiB, serial: "SN-C", bus: "scsi", image: "/r/c.img" },
    ]);
    expect(args).toEqual([
      "-drive",
      "file=/r/system.img,if=none,id=sys,format=raw,cache=unsafe",
      "-device",
      "virtio-blk-pci,drive=sys,serial=pl-system",
      "-device",
      "virtio-scsi-pci,id=scsi0",
      "-drive",
      "file=/r/a.img,if=none,id=d0,format=raw,cache=unsafe,discard=unmap",
      "-device",
      "virtio-blk-pci,drive=d0,serial=SN-A",
      "-drive",
      "file=/r/b.img,if=none,id=d1,format=raw,cache=unsafe,discard=unmap",
      "-device",
      "scsi-hd,bus=scsi0.0,drive=d1,channel=0,scsi-id=0,lun=0,serial=SN-B,wwn=0x5000c500a1b2c3d4,vendor=PLVM,product=PL DISK",
      "-drive",
      "file=/r/c.img,if=none,id=d2,format=raw,cache=unsafe,discard=unmap",
      "-device",
      "scsi-hd,bus=scsi0.0,drive=d2,channel=0,scsi-id=1,lun=0,serial=SN-C",
    ]);
  });

  test("no virtio-scsi controller without scsi disks", () => {
    expect(diskArgs("/s.img", [{ sizeBytes: GiB, serial: "A", image: "/a.img" }])).not.toContain(
      "virtio-scsi-pci,id=scsi0",
    );
  });
});

describe("when the tier is not installed", () => {
  const saved = process.env.PULUMI_LVM_CACHE;
  beforeEach(() => {
    process.env.PULUMI_LVM_CACHE = path.join(os.tmpdir(), "pulumi-lvm-no-such-cache");
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.PULUMI_LVM_CACHE;
    else process.env.PULUMI_LVM_CACHE = saved;
  });

  test("requireVmArtifacts names what is missing and says to run install.sh", () => {
    expect(() => requireVmArtifacts()).toThrow(
      /missing: the kernel 6\.1\.0-\d+-amd64[\s\S]*run: +bash .*test\/vm\/install\.sh/,
    );
    expect(() => requireVmArtifacts()).toThrow(`initramfs-${initHash()}.cpio.gz`);
  });

  test("startGuest throws instead of skipping", async () => {
    await expect(startGuest({ disks: [] })).rejects.toThrow(
      /real-kernel test tier \(qemu\) is not installed/,
    );
  });

  test("the kernel version comes from the pin in install.sh", () => {
    expect(kernelVersion()).toMatch(/^6\.1\.0-\d+-amd64$/);
  });
});
