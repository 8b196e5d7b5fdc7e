import { agentSpecSchema } from "./schemas";
import { deviceNameProblem } from "./device-names";

describe("deviceNameProblem", () => {
  it.each([
    "sdb",
    "nvme0n1",
    "dm-3",
    "mapper/vg-lv",
    "/dev/sdb",
    "/dev/disk/by-id/wwn-0x5000c500a1b2c3d4",
    "/dev/disk/by-path/pci-0000:00:1f.2-ata-1",
  ])("accepts %s", (name) => expect(deviceNameProblem(name)).toBeUndefined());

  it.each([
    ["/dev/../etc/shadow", /\.\. segment/],
    ["/dev/./sdb", /\. or \.\. segment/],
    ["/etc/passwd", /not under \/dev/],
    ["/dev/sdb;reboot", /characters other than/],
    ["/dev/sd$(id)", /characters other than/],
    ["/dev/sdb /dev/sdc", /characters other than/],
    ["/dev//sdb", /not a normalized path/],
    ["../sdb", /must be a kernel name/],
    ["sd`id`", /must be a kernel name/],
    ["mapper/../sda", /segment/],
    ["sdb\n", /must be a kernel name/],
  ])("refuses %j", (name, message) => expect(deviceNameProblem(name)).toMatch(message));
});

describe("the agent's spec schema", () => {
  it("checks device names only under the keys that name devices", () => {
    const spec = (key: string, value: string) => ({
      volumeGroups: [
        {
          name: "vg0",
          deviceSelector: {
            deviceSelectorTerms: [{ matchExpressions: [{ key, operator: "In", values: [value] }] }],
          },
        },
      ],
    });
    expect(agentSpecSchema.safeParse(spec("symlink", "/dev/../x")).success).toBe(false);
    expect(agentSpecSchema.safeParse(spec("kname", "sdb")).success).toBe(true);
    expect(agentSpecSchema.safeParse(spec("model", "Samsung SSD 860 EVO (500GB)")).success).toBe(true);
  });
});
