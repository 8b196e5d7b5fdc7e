import { deviceIds } from "./identity";
import { indexNode } from "./node-index";
import { disk, inventory, partition } from "../../test/support/planner/testing";

test("wwn+serial, else a by-id link, else the PV UUID, else the kernel name", () => {
  const inv = inventory(
    [
      disk("sda", { wwn: "0x5000C500A1B2C3D4", serial: "ZA1" }),
      partition("sda", 1, {
        wwn: "0x5000C500A1B2C3D4",
        serial: "ZA1",
        symlinks: ["/dev/disk/by-id/wwn-0x5000c500a1b2c3d4-part1", "/dev/disk/by-id/ata-X_ZA1-part1"],
      }),
      disk("sdb", { serial: "ZB2" }),
      disk("sdc", {
        symlinks: ["/dev/disk/by-path/pci-1", "/dev/disk/by-id/wwn-0xc", "/dev/disk/by-id/ata-C"],
      }),
      disk("sdd"),
      disk("sde"),
      disk("sdf", { wwn: "0x6000a", symlinks: ["/dev/disk/by-id/scsi-path-f"] }),
      disk("sdg", { wwn: "0x6000A" }),
    ],
    {
      pvs: [
        { device: "/dev/sdd", uuid: "Abc-123", vgName: "vg1", size: 1, free: 1, tags: [] },
        { device: "/dev/sde", uuid: "Orphan-1", vgName: "", size: 1, free: 1, tags: [] },
      ],
    },
  );
  expect(Object.fromEntries(deviceIds(indexNode(inv)))).toEqual({
    "/dev/sda": "wwn:0x5000c500a1b2c3d4+serial:ZA1",
    "/dev/sda1": "by-id:/dev/disk/by-id/ata-X_ZA1-part1",
    "/dev/sdb": "serial:ZB2",
    "/dev/sdc": "by-id:/dev/disk/by-id/ata-C",
    "/dev/sdd": "pv:Abc-123",
    "/dev/sde": "kname:/dev/sde", // an orphan PV's UUID is not an identity: the plan may wipe it
    // Two paths to one LUN share a WWN: neither may use it.
    "/dev/sdf": "by-id:/dev/disk/by-id/scsi-path-f",
    "/dev/sdg": "kname:/dev/sdg",
  });
});

test("an id follows the device through a kernel rename", () => {
  const before = deviceIds(
    indexNode(
      inventory([disk("sdb", { wwn: "0xa", serial: "A" }), disk("sdc", { wwn: "0xb", serial: "B" })]),
    ),
  );
  const after = deviceIds(
    indexNode(
      inventory([disk("sdc", { wwn: "0xa", serial: "A" }), disk("sdb", { wwn: "0xb", serial: "B" })]),
    ),
  );
  expect(after.get("/dev/sdc")).toBe(before.get("/dev/sdb"));
});
