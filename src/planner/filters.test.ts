import type { VolumeGroup } from "../api";
import type { BlockDevice, NodeInventory } from "../inventory/types";
import { eligibility } from "./filters";
import { indexNode } from "./node-index";
import { ownershipOf } from "./ownership";
import {
  asMember,
  disk,
  GiB,
  inventory,
  mapper,
  MiB,
  partition,
  signature,
  volumeGroup,
} from "../../test/support/planner/testing";

const group: VolumeGroup = {
  name: "vg1",
  deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }] },
};
const wiping: VolumeGroup = { ...group, forceWipeDevicesAndDestroyAllData: true };

function check(target: string, inv: NodeInventory, vg: VolumeGroup = group, adopted = false) {
  const index = indexNode(inv);
  return eligibility(index.byKname.get(target)!, vg, index, ownershipOf(index, ["vg1"]), adopted);
}
const alone = (d: BlockDevice) => inventory([d]);

describe("eligibility: one reason per filter, naming the device", () => {
  test.each<[string, NodeInventory, string, string[]]>([
    ["a blank disk is eligible", alone(disk("sdb")), "/dev/sdb", []],
    [
      "optical drive",
      alone(disk("sr0", { type: "rom", size: 4 * GiB })),
      "/dev/sr0",
      ["/dev/sr0 is an optical drive (rom) and cannot be used"],
    ],
    [
      "LVM logical volume",
      alone(disk("dm-4", { type: "lvm", path: "/dev/mapper/other-lv" })),
      "/dev/dm-4",
      ["/dev/mapper/other-lv is an LVM logical volume; volume groups are not built on logical volumes"],
    ],
    ["read-only", alone(disk("sdb", { readOnly: true })), "/dev/sdb", ["/dev/sdb is read-only"]],
    ["removable", alone(disk("sdb", { removable: true })), "/dev/sdb", ["/dev/sdb is removable media"]],
    [
      "suspended",
      alone(mapper(2, "frozen", { suspended: true })),
      "/dev/dm-2",
      ["/dev/mapper/frozen is a suspended device-mapper device"],
    ],
    [
      "loop device of a Kubernetes plugin",
      alone(
        disk("loop7", { type: "loop", backingFile: "/var/lib/kubelet/plugins/kubernetes.io/csi/x/disk.img" }),
      ),
      "/dev/loop7",
      [
        "/dev/loop7 is a loop device backing a Kubernetes volume (/var/lib/kubelet/plugins/kubernetes.io/csi/x/disk.img)",
      ],
    ],
    [
      "loop device of anything else is fine",
      alone(disk("loop1", { type: "loop", backingFile: "/var/tmp/disk.img" })),
      "/dev/loop1",
      [],
    ],
    [
      "EFI partition by type",
      inventory([disk("sda"), partition("sda", 1, { parttype: "C12A7328-F81F-11D2-BA4B-00A0C93EC93B" })]),
      "/dev/sda1",
      ["/dev/sda1 was used as a boot partition and cannot be used"],
    ],
    [
      "BIOS boot partition by type",
      inventory([disk("sda"), partition("sda", 1, { parttype: "21686148-6449-6e6f-744e-656564454649" })]),
      "/dev/sda1",
      ["/dev/sda1 was used as a boot partition and cannot be used"],
    ],
    [
      "boot partition by label",
      inventory([disk("sda"), partition("sda", 2, { partlabel: "boot" })]),
      "/dev/sda2",
      ["/dev/sda2 was used as a boot partition and cannot be used"],
    ],
    [
      "ESP by label",
      inventory([disk("sda"), partition("sda", 1, { partlabel: "ESP" })]),
      "/dev/sda1",
      ["/dev/sda1 was used as a boot partition and cannot be used"],
    ],
    [
      "MBR EFI partition",
      inventory([disk("sda"), partition("sda", 1, { parttype: "0xef" })]),
      "/dev/sda1",
      ["/dev/sda1 was used as a boot partition and cannot be used"],
    ],
    [
      "Microsoft reserved partition",
      inventory([
        disk("sda"),
        partition("sda", 2, {
          partlabel: "Microsoft reserved partition",
          parttype: "e3c9e316-0b5c-4db8-817d-f92df00215ae",
        }),
      ]),
      "/dev/sda2",
      ["/dev/sda2 is a reserved partition (Microsoft reserved partition) and cannot be used"],
    ],
    [
      "extended partition",
      inventory([disk("sda"), partition("sda", 4, { parttype: "0x5" })]),
      "/dev/sda4",
      ["/dev/sda4 is an extended partition, a container for logical partitions"],
    ],
    [
      "mounted",
      alone(disk("sdb", { mountpoints: ["/var/lib/data"] })),
      "/dev/sdb",
      ["/dev/sdb is mounted at /var/lib/data"],
    ],
    [
      "active swap",
      alone(disk("sdb", { mountpoints: ["[SWAP]"] })),
      "/dev/sdb",
      ["/dev/sdb is in use as swap"],
    ],
    [
      "the disk holding / and /boot",
      inventory([
        disk("sda"),
        partition("sda", 1, { mountpoints: ["/boot"] }),
        partition("sda", 2, { mountpoints: ["/"] }),
      ]),
      "/dev/sda",
      [
        "/dev/sda holds /dev/sda1, which is mounted at /boot",
        "/dev/sda holds /dev/sda2, which is mounted at /",
        "/dev/sda has partitions (/dev/sda1, /dev/sda2)",
      ],
    ],
    [
      "a disk under a mounted crypt device",
      inventory([disk("sdb"), mapper(0, "crypt-home", { parent: "/dev/sdb", mountpoints: ["/home"] })]),
      "/dev/sdb",
      [
        "/dev/sdb holds /dev/mapper/crypt-home, which is mounted at /home",
        "/dev/sdb is held by /dev/mapper/crypt-home (crypt)",
      ],
    ],
    [
      "has partitions",
      inventory([disk("sdb", { signatures: [] }), partition("sdb", 1)]),
      "/dev/sdb",
      ["/dev/sdb has partitions (/dev/sdb1)"],
    ],
    [
      "held by md",
      inventory([disk("sdb"), disk("md0", { type: "raid1", parent: "/dev/sdb" })]),
      "/dev/sdb",
      ["/dev/sdb is held by /dev/md0 (raid1)"],
    ],
    [
      "filesystem signature",
      alone(disk("sdb", { signatures: [signature("xfs")] })),
      "/dev/sdb",
      ["/dev/sdb has existing signature xfs, which only forceWipeDevicesAndDestroyAllData erases"],
    ],
    [
      "several signatures (lsblk FSTYPE plays no part)",
      alone(
        disk("sdb", {
          fstype: undefined,
          signatures: [signature("gpt", { usage: "partition-table" }), signature("PMBR")],
        }),
      ),
      "/dev/sdb",
      ["/dev/sdb has existing signatures gpt and PMBR, which only forceWipeDevicesAndDestroyAllData erases"],
    ],
    [
      "an FSTYPE without a probed signature is not a signature",
      alone(disk("sdb", { fstype: "ext4" })),
      "/dev/sdb",
      [],
    ],
    [
      "swap signature",
      alone(disk("sdb", { signatures: [signature("swap", { usage: "other" })] })),
      "/dev/sdb",
      ["/dev/sdb has existing signature swap, which only forceWipeDevicesAndDestroyAllData erases"],
    ],
    [
      "not probed",
      alone(disk("sdb", { probed: false, probeError: "wipefs: exit 1: Device or resource busy" })),
      "/dev/sdb",
      [
        "/dev/sdb could not be probed for signatures (wipefs: exit 1: Device or resource busy), so it is treated as in use",
      ],
    ],
    [
      "probed unknown",
      alone(disk("sdb", { probed: undefined })),
      "/dev/sdb",
      ["/dev/sdb could not be probed for signatures, so it is treated as in use"],
    ],
    [
      "too small",
      alone(disk("sdb", { size: 512 * MiB })),
      "/dev/sdb",
      ["/dev/sdb is smaller than the minimum device size 1Gi (it has 512Mi)"],
    ],
  ])("%s", (_name, inv, target, reasons) => {
    expect(check(target, inv).reasons).toEqual(reasons);
  });

  test("minDeviceSize comes from the volume group", () => {
    expect(
      check("/dev/sdb", alone(disk("sdb", { size: 50 * GiB })), { ...group, minDeviceSize: "100Gi" }).reasons,
    ).toEqual(["/dev/sdb is smaller than the minimum device size 100Gi (it has 50Gi)"]);
  });
});

describe("LVM physical volumes", () => {
  const foreign = volumeGroup("legacy", [{ device: disk("sdb") }], { tags: [] });
  const unmanaged = volumeGroup("old", [{ device: disk("sdb") }]);
  const inv = (g: ReturnType<typeof volumeGroup>) =>
    inventory([asMember(disk("sdb"))], { pvs: g.pvs, vgs: [g.vg] });

  test("a PV of a group without our tag is never used, even with the opt-in", () => {
    const reason = ["/dev/sdb is a physical volume of volume group legacy, which pulumi-lvm does not own"];
    expect(check("/dev/sdb", inv(foreign)).reasons).toEqual(reason);
    expect(check("/dev/sdb", inv(foreign), wiping)).toEqual({ reasons: reason, wipe: [] });
  });
  test("a PV of one of our groups that the spec does not name is left alone", () => {
    expect(check("/dev/sdb", inv(unmanaged), wiping).reasons).toEqual([
      "/dev/sdb is a physical volume of volume group old, which this spec does not name",
    ]);
  });
  const orphan = inventory([asMember(disk("sdb"))], {
    pvs: [{ device: "/dev/sdb", uuid: "u1", vgName: "", size: 100 * GiB, free: 100 * GiB, tags: [] }],
  });
  test("an orphan PV may be part of a group whose other disks are missing", () => {
    expect(check("/dev/sdb", orphan).reasons).toEqual([
      "/dev/sdb is an LVM physical volume in no volume group (it may belong to a volume group whose other disks are missing); it is only reused with forceWipeDevicesAndDestroyAllData",
    ]);
  });
  test("with the opt-in an orphan PV is wiped", () => {
    expect(check("/dev/sdb", orphan, wiping)).toEqual({
      reasons: [],
      wipe: ["LVM2_member"],
      wipeSignatures: [{ type: "LVM2_member", offset: "0x218" }],
    });
  });
  test("an orphan PV the agent created itself is adopted, nothing wiped", () => {
    expect(check("/dev/sdb", orphan, group, true)).toEqual({ reasons: [], wipe: [] });
    expect(check("/dev/sdb", orphan, wiping, true)).toEqual({ reasons: [], wipe: [] });
  });
  test("an LVM2_member signature lvm does not report is wiped only with the opt-in", () => {
    const hidden = alone(asMember(disk("sdb")));
    expect(check("/dev/sdb", hidden).reasons).toEqual([
      "/dev/sdb has existing signature LVM2_member, which only forceWipeDevicesAndDestroyAllData erases",
    ]);
    expect(check("/dev/sdb", hidden, wiping)).toEqual({
      reasons: [],
      wipe: ["LVM2_member"],
      wipeSignatures: [{ type: "LVM2_member", offset: "0x218" }],
    });
  });
});

describe("forceWipeDevicesAndDestroyAllData", () => {
  test("lists the signatures to erase instead of excluding", () => {
    expect(
      check(
        "/dev/sdb",
        alone(
          disk("sdb", {
            signatures: [
              signature("xfs", { offset: "0x1000" }),
              signature("xfs", { uuid: "u-1", label: "data" }),
            ],
          }),
        ),
        wiping,
      ),
    ).toEqual({
      reasons: [],
      wipe: ["xfs"],
      // every signature with its identity, by offset: a re-made filesystem changes the plan's hash
      wipeSignatures: [
        { type: "xfs", offset: "0x0", uuid: "u-1", label: "data" },
        { type: "xfs", offset: "0x1000" },
      ],
    });
  });
  test("does not override any other filter", () => {
    expect(
      check(
        "/dev/sdb",
        alone(disk("sdb", { mountpoints: ["/data"], signatures: [signature("xfs")] })),
        wiping,
      ),
    ).toEqual({
      reasons: ["/dev/sdb is mounted at /data"],
      wipe: [],
    });
  });
  test("does not apply to a device that could not be probed", () => {
    expect(check("/dev/sdb", alone(disk("sdb", { probed: false })), wiping).reasons).toHaveLength(1);
  });
});
