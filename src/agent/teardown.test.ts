import type { LVMNodeSpec } from "../api";
import type { LogicalVolume, NodeInventory } from "../inventory/types";
import { AgentError } from "./errors";
import { checkNoUserVolumes, teardownVolumeGroup, userVolumes } from "./teardown";

const spec: LVMNodeSpec = {
  volumeGroups: [
    {
      name: "vg0",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "path", operator: "In", values: ["/dev/sdb"] }] }],
      },
    },
    {
      name: "vg1",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "path", operator: "In", values: ["/dev/sdc"] }] }],
      },
    },
  ],
  deviceClasses: [
    {
      name: "fast",
      strategy: "Thin",
      volumeGroup: "vg0",
      thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
    },
    { name: "bulk", strategy: "Thick", volumeGroup: "vg1" },
    { name: "bulk2", strategy: "Thick", volumeGroup: "vg1" },
  ],
};
const lv = (vgName: string, name: string, attr: string, hidden = false): LogicalVolume => ({
  vgName,
  name,
  attr,
  uuid: `${vgName}-${name}`,
  size: 1 << 20,
  tags: [],
  ...(hidden ? { hidden } : {}),
});
const inventory = (lvs: LogicalVolume[]): NodeInventory => ({
  node: "n",
  labels: {},
  devices: [],
  pvs: [],
  vgs: [],
  lvs,
});

describe("userVolumes", () => {
  it("counts thin volumes and other LVs, not our pool or lvm's hidden volumes", () => {
    const inv = inventory([
      lv("vg0", "pool0", "twi-aotz--"),
      lv("vg0", "pool0_tdata", "Twi-ao----", true),
      lv("vg0", "lvol0_pmspare", "ewi-------", true),
      lv("vg0", "pvc-1234", "Vwi-aotz--"),
      lv("vg1", "data", "-wi-a-----"),
    ]);
    expect(userVolumes(inv, spec, ["vg0"]).map((v) => v.name)).toEqual(["pvc-1234"]);
    expect(userVolumes(inv, spec, ["vg0", "vg1"]).map((v) => v.name)).toEqual(["pvc-1234", "data"]);
  });

  it("counts a linear LV that merely has our pool's name", () => {
    expect(userVolumes(inventory([lv("vg0", "pool0", "-wi-a-----")]), spec, ["vg0"])).toHaveLength(1);
  });
});

describe("checkNoUserVolumes", () => {
  const inv = inventory([lv("vg0", "pool0", "twi-aotz--"), lv("vg0", "pvc-1", "Vwi-aotz--")]);

  it("refuses with 409 listing the volumes", () => {
    let e: AgentError | undefined;
    try {
      checkNoUserVolumes(inv, spec, { volumeGroup: "vg0" });
    } catch (err) {
      e = err as AgentError;
    }
    expect(e?.status).toBe(409);
    expect(e?.code).toBe("VolumeGroupInUse");
    expect(e?.details.volumes).toEqual([
      { volumeGroup: "vg0", name: "pvc-1", attributes: "Vwi-aotz--", size: 1 << 20 },
    ]);
  });

  it("lets force through, and a group without user volumes", () => {
    expect(() => checkNoUserVolumes(inv, spec, { volumeGroup: "vg0", force: true })).not.toThrow();
    expect(() => checkNoUserVolumes(inv, spec, { volumeGroup: "vg1" })).not.toThrow();
  });
});

describe("teardownVolumeGroup", () => {
  it("resolves a device class to its volume group", () => {
    expect(teardownVolumeGroup(spec, { deviceClass: "fast" })).toBe("vg0");
    expect(teardownVolumeGroup(spec, { volumeGroup: "vg1" })).toBe("vg1");
    expect(teardownVolumeGroup(spec, {})).toBeUndefined();
  });

  it("refuses names not in the spec (400) and a device class sharing its group (409)", () => {
    expect(() => teardownVolumeGroup(spec, { volumeGroup: "other" })).toThrow(/not in spec.volumeGroups/);
    expect(() => teardownVolumeGroup(spec, { deviceClass: "nope" })).toThrow(/not in spec.deviceClasses/);
    expect(() => teardownVolumeGroup(spec, { deviceClass: "bulk" })).toThrow(
      /shares volume group "vg1" with bulk2/,
    );
  });
});
