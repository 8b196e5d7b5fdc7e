import { planNode } from "../../planner";
import { asMember, disk, inventory, thinPoolLv, volumeGroup } from "../../../test/support/planner/testing";
import { convertLvmCluster } from "./convert";

/**
 * What docs/migration.md promises for a node LVMS built, planned with the converted set: no step
 * touches LVMS's group or its disks (not even with forceWipe or a wildcard), the group is reported
 * blocked, and the agents' lvmd.yaml would no longer list its class.
 */
function convertedTemplate(deviceSelector?: Record<string, unknown>) {
  const c = convertLvmCluster({
    apiVersion: "lvm.topolvm.io/v1alpha1",
    kind: "LVMCluster",
    metadata: { name: "lvmcluster" },
    spec: {
      storage: {
        deviceClasses: [
          {
            name: "vg1",
            default: true,
            ...(deviceSelector ? { deviceSelector } : {}),
            thinPoolConfig: { name: "thin-pool-1", sizePercent: 90, overprovisionRatio: 10 },
          },
        ],
      },
    },
  });
  if (!c.ok) throw new Error(JSON.stringify(c.problems));
  return c.nodeSets[0]!.spec.template;
}

/** vg1 as LVMS builds it: tagged lvms, on sdb and sdc, a thin pool holding a volume; sdd is free. */
function lvmsNode() {
  const g = volumeGroup("vg1", [{ device: disk("sdb"), used: 1000 }, { device: disk("sdc") }], {
    tags: ["lvms"],
  });
  const pool = { ...thinPoolLv("vg1", "thin-pool-1", 1000), tags: ["lvms"] };
  const volume = {
    name: "pvc-0d3c",
    vgName: "vg1",
    uuid: "lv-1",
    size: 10 * 1024 ** 3,
    attr: "Vwi-aotz--",
    tags: [],
  };
  return inventory([asMember(disk("sdb")), asMember(disk("sdc")), disk("sdd")], {
    pvs: g.pvs,
    vgs: [g.vg],
    lvs: [pool, volume],
  });
}

const LVMS_LVMD = {
  "device-classes": [
    {
      name: "vg1",
      "volume-group": "vg1",
      default: true,
      type: "thin",
      "thin-pool": { name: "thin-pool-1", "overprovision-ratio": 10 },
    },
  ],
  "socket-name": "/run/lvmd/lvmd.sock",
};

describe("a node LVMS built, planned with the converted set", () => {
  test.each([
    [
      "its paths, with forceWipeDevicesAndDestroyAllData",
      { paths: ["/dev/sdb", "/dev/sdc"], forceWipeDevicesAndDestroyAllData: true },
    ],
    ["no deviceSelector (kname Any), with a free disk beside it", undefined],
  ])("%s: no step for LVMS's group or disks, the group blocked", (_, selector) => {
    const plan = planNode(lvmsNode(), convertedTemplate(selector));
    expect(plan.actions).toEqual([]);
    expect(plan.blocked).toEqual([
      {
        volumeGroup: "vg1",
        reason:
          "volume group vg1 exists on this node without the pulumi-lvm tag; pulumi-lvm does not own it and changes nothing in it",
      },
    ]);
    const excluded = plan.volumeGroups[0]!.excluded.map((e) => [e.kname, e.reasons.join("; ")]);
    expect(excluded).toEqual(
      expect.arrayContaining([
        [
          "/dev/sdb",
          expect.stringContaining("is a physical volume of volume group vg1, which pulumi-lvm does not own"),
        ],
        [
          "/dev/sdc",
          expect.stringContaining("is a physical volume of volume group vg1, which pulumi-lvm does not own"),
        ],
      ]),
    );
    expect(plan.volumeGroups[0]!.claimed).toEqual([]);
  });

  test("the agents would rewrite LVMS's lvmd.yaml without its class (the guide keeps them off such nodes)", () => {
    const plan = planNode(lvmsNode(), convertedTemplate({ paths: ["/dev/sdb", "/dev/sdc"] }), {
      currentLvmdConfig: LVMS_LVMD as never,
    });
    expect(plan.actions.map((a) => [a.op, a.reason])).toEqual([
      ["write-lvmd-config", "write /etc/topolvm/lvmd.yaml with no device classes for TopoLVM's lvmd"],
    ]);
  });
});
