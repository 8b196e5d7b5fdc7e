import type { DeviceRequirement } from "./device-selector";
import { matchDeviceSelector, resolveDeviceName } from "./device-selector";
import { indexNode } from "./node-index";
import { disk, GiB, inventory, mapper, partition } from "../../test/support/planner/testing";

const node = indexNode(
  inventory([
    disk("sda", {
      size: 20 * GiB,
      rotational: true,
      serial: "S-A",
      wwn: "0x5000c500aaaa0001",
      model: "ST2000 ",
      vendor: "ATA",
      symlinks: ["/dev/disk/by-id/wwn-0x5000c500aaaa0001", "/dev/disk/by-path/pci-0000:00:1f.2-ata-1"],
    }),
    partition("sda", 1, { size: 1 * GiB, partlabel: "data-a" }),
    disk("sdb", { size: 100 * GiB, serial: "S-B", symlinks: ["/dev/disk/by-id/ata-DISK_S-B"] }),
    disk("nvme0n1", {
      size: 500 * GiB,
      rotational: false,
      model: "Samsung 980",
      symlinks: ["/dev/disk/by-id/nvme-Samsung_980_X1"],
    }),
    mapper(0, "crypt-data", { size: 100 * GiB, parent: "/dev/sdb" }),
    disk("sdc", { size: 30 * GiB, rotational: undefined }),
  ]),
);

function select(...terms: DeviceRequirement[][]): string[] {
  const m = matchDeviceSelector(
    { deviceSelectorTerms: terms.map((matchExpressions) => ({ matchExpressions })) },
    node,
  );
  return [...m.matched];
}
const one = (r: DeviceRequirement) => select([r]);

describe("resolveDeviceName: kname, path and symlink values all name a device", () => {
  test.each([
    ["sdb", "/dev/sdb"],
    ["/dev/sdb", "/dev/sdb"],
    ["/dev/disk/by-id/ata-DISK_S-B", "/dev/sdb"],
    ["/dev/disk/by-path/pci-0000:00:1f.2-ata-1", "/dev/sda"],
    ["/dev/mapper/crypt-data", "/dev/dm-0"],
    ["crypt-data", "/dev/dm-0"],
    ["dm-0", "/dev/dm-0"],
    ["/dev/dm-0", "/dev/dm-0"],
    ["sda1", "/dev/sda1"],
    ["disk/by-id/ata-DISK_S-B", "/dev/sdb"],
  ])("%s → %s", (value, kname) => {
    expect(resolveDeviceName(value, node).map((d) => d.kname)).toEqual([kname]);
  });

  test.each(["sdz", "/dev/sdz", "/dev/disk/by-id/nope", "/dev/mapper/nope", "mapper/crypt-datax"])(
    "%s names nothing",
    (value) => {
      expect(resolveDeviceName(value, node)).toEqual([]);
    },
  );

  test("a kernel name a member joined under names that member, not the disk that has the name now", () => {
    const member = node.byKname.get("/dev/sdc")!;
    const recorded = new Map([["/dev/sdb", [member]]]);
    expect(resolveDeviceName("sdb", node, recorded).map((d) => d.kname)).toEqual(["/dev/sdc"]);
    expect(resolveDeviceName("/dev/disk/by-id/ata-DISK_S-B", node, recorded).map((d) => d.kname)).toEqual([
      "/dev/sdb",
    ]);
  });
});

describe("operators, one table row per key and operator", () => {
  test.each<[string, DeviceRequirement, string[]]>([
    [
      "kname In (short, path, by-id)",
      { key: "kname", operator: "In", values: ["sda", "/dev/nvme0n1", "/dev/disk/by-id/ata-DISK_S-B"] },
      ["/dev/sda", "/dev/sdb", "/dev/nvme0n1"],
    ],
    [
      "path In a /dev/mapper name",
      { key: "path", operator: "In", values: ["/dev/mapper/crypt-data"] },
      ["/dev/dm-0"],
    ],
    [
      "symlink In a by-path link",
      { key: "symlink", operator: "In", values: ["/dev/disk/by-path/pci-0000:00:1f.2-ata-1"] },
      ["/dev/sda"],
    ],
    [
      "kname NotIn",
      { key: "kname", operator: "NotIn", values: ["sda", "sda1", "dm-0"] },
      ["/dev/sdb", "/dev/sdc", "/dev/nvme0n1"],
    ],
    [
      "kname Exists (always)",
      { key: "kname", operator: "Exists" },
      ["/dev/sda", "/dev/sda1", "/dev/sdb", "/dev/sdc", "/dev/dm-0", "/dev/nvme0n1"],
    ],
    ["kname DoesNotExist (never)", { key: "kname", operator: "DoesNotExist" }, []],
    [
      "symlink Exists",
      { key: "symlink", operator: "Exists" },
      ["/dev/sda", "/dev/sdb", "/dev/dm-0", "/dev/nvme0n1"],
    ],
    ["symlink DoesNotExist", { key: "symlink", operator: "DoesNotExist" }, ["/dev/sda1", "/dev/sdc"]],
    ["serial In", { key: "serial", operator: "In", values: ["S-B"] }, ["/dev/sdb"]],
    [
      "serial NotIn holds where serial is unknown",
      { key: "serial", operator: "NotIn", values: ["S-B"] },
      ["/dev/sda", "/dev/sda1", "/dev/sdc", "/dev/dm-0", "/dev/nvme0n1"],
    ],
    ["serial Exists", { key: "serial", operator: "Exists" }, ["/dev/sda", "/dev/sdb"]],
    [
      "serial DoesNotExist",
      { key: "serial", operator: "DoesNotExist" },
      ["/dev/sda1", "/dev/sdc", "/dev/dm-0", "/dev/nvme0n1"],
    ],
    [
      "wwn In, case-insensitive",
      { key: "wwn", operator: "In", values: ["0x5000C500AAAA0001"] },
      ["/dev/sda"],
    ],
    ["model In, trailing blanks ignored", { key: "model", operator: "In", values: ["ST2000"] }, ["/dev/sda"]],
    ["model In with a space", { key: "model", operator: "In", values: ["Samsung 980"] }, ["/dev/nvme0n1"]],
    ["vendor In", { key: "vendor", operator: "In", values: ["ATA"] }, ["/dev/sda"]],
    ["type In", { key: "type", operator: "In", values: ["part", "crypt"] }, ["/dev/sda1", "/dev/dm-0"]],
    ["type NotIn", { key: "type", operator: "NotIn", values: ["disk"] }, ["/dev/sda1", "/dev/dm-0"]],
    ["partlabel In", { key: "partlabel", operator: "In", values: ["data-a"] }, ["/dev/sda1"]],
    ["partlabel Exists", { key: "partlabel", operator: "Exists" }, ["/dev/sda1"]],
    ["size In (exact quantity)", { key: "size", operator: "In", values: ["30Gi"] }, ["/dev/sdc"]],
    [
      "size GreaterThan a quantity",
      { key: "size", operator: "GreaterThan", values: ["30Gi"] },
      ["/dev/sdb", "/dev/dm-0", "/dev/nvme0n1"],
    ],
    [
      "size LessThan a decimal quantity",
      { key: "size", operator: "LessThan", values: ["25G"] },
      ["/dev/sda", "/dev/sda1"],
    ],
    [
      "size GreaterThan is strict",
      { key: "size", operator: "GreaterThan", values: ["100Gi"] },
      ["/dev/nvme0n1"],
    ],
    ["rotational In true", { key: "rotational", operator: "In", values: ["true"] }, ["/dev/sda"]],
    [
      "rotational In 0",
      { key: "rotational", operator: "In", values: ["0"] },
      ["/dev/sda1", "/dev/sdb", "/dev/dm-0", "/dev/nvme0n1"],
    ],
    [
      "rotational GreaterThan 0 (spinning)",
      { key: "rotational", operator: "GreaterThan", values: ["0"] },
      ["/dev/sda"],
    ],
    [
      "rotational LessThan true (solid state)",
      { key: "rotational", operator: "LessThan", values: ["true"] },
      ["/dev/sda1", "/dev/sdb", "/dev/dm-0", "/dev/nvme0n1"],
    ],
    ["rotational DoesNotExist (unknown)", { key: "rotational", operator: "DoesNotExist" }, ["/dev/sdc"]],
    [
      "Any",
      { key: "kname", operator: "Any" },
      ["/dev/sda", "/dev/sda1", "/dev/sdb", "/dev/sdc", "/dev/dm-0", "/dev/nvme0n1"],
    ],
  ])("%s", (_name, requirement, expected) => {
    expect(one(requirement).sort()).toEqual([...expected].sort());
  });
});

describe("terms are ORed, expressions ANDed", () => {
  test("expressions of one term must all hold", () => {
    expect(
      select([
        { key: "kname", operator: "Any" },
        { key: "size", operator: "GreaterThan", values: ["30Gi"] },
        { key: "type", operator: "In", values: ["disk"] },
      ]).sort(),
    ).toEqual(["/dev/nvme0n1", "/dev/sdb"]);
  });
  test("any term may hold", () => {
    expect(
      select(
        [{ key: "serial", operator: "In", values: ["S-A"] }],
        [{ key: "type", operator: "In", values: ["crypt"] }],
      ).sort(),
    ).toEqual(["/dev/dm-0", "/dev/sda"]);
  });
});

describe("values that name no device", () => {
  test("are reported with the alternatives of their own expression only", () => {
    const m = matchDeviceSelector(
      {
        deviceSelectorTerms: [
          {
            matchExpressions: [
              { key: "kname", operator: "In", values: ["/dev/mapper/missing", "/dev/mapper/crypt-data"] },
            ],
          },
          { matchExpressions: [{ key: "kname", operator: "In", values: ["sdb"] }] },
        ],
      },
      node,
    );
    expect([...m.matched].sort()).toEqual(["/dev/dm-0", "/dev/sdb"]);
    expect(m.notFound).toEqual([{ value: "/dev/mapper/missing", alternatives: ["/dev/dm-0"] }]);
  });
  test("NotIn values that name nothing are not reported", () => {
    expect(
      matchDeviceSelector(
        {
          deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "NotIn", values: ["sdx"] }] }],
        },
        node,
      ).notFound,
    ).toEqual([]);
  });
});
