import type { LVMNodeSpec } from "../api";
import type { NodeInventory } from "../inventory/types";
import { orderActions, planNode } from "./plan-node";
import { step } from "./plan-objects";
import { applyPlanEffects } from "./simulate";
import {
  asMember,
  disk,
  GiB,
  inventory,
  knameGroup,
  nodeSpec,
  signature,
  thinPoolLv,
  volumeGroup,
} from "../../test/support/planner/testing";
import type { NodePlan } from "./types";

const argvs = (plan: NodePlan) =>
  plan.actions.map((a) => (a.op === "write-lvmd-config" ? `write ${a.file!.path}` : a.argv.join(" ")));
const spec = nodeSpec([knameGroup("vg1", ["sdb", "sdc"])]);
/** 100Gi disks give 25599 extents of 4MiB each as PVs. */
const EXTENTS_PER_DISK = 25599;

describe("a fresh node", () => {
  const inv = inventory([disk("sda", { mountpoints: ["/"] }), disk("sdb"), disk("sdc")]);
  const plan = planNode(inv, spec);

  test("exact commands in order: pvcreate, vgcreate with the owner tag, kname tags, thin pool, lvmd", () => {
    expect(argvs(plan)).toEqual([
      "pvcreate /dev/sdb",
      "pvcreate /dev/sdc",
      "vgcreate --addtag pulumi-lvm vg1 /dev/sdb /dev/sdc",
      "pvchange --addtag pulumi-lvm.kname=sdb /dev/sdb",
      "pvchange --addtag pulumi-lvm.kname=sdc /dev/sdc",
      "lvcreate --type thin-pool --name pool0 --extents 90%VG --zero y --addtag pulumi-lvm vg1",
      "write /etc/topolvm/lvmd.yaml",
    ]);
    expect(plan.blocked).toEqual([]);
    expect(plan.actions.some((a) => a.destructive)).toBe(false);
  });

  test("every device action names the device and its stable id", () => {
    for (const a of plan.actions.filter((x) => x.op === "pvcreate" || x.op === "pvchange")) {
      expect(a.device).toMatch(/^\/dev\/sd[bc]$/);
      expect(a.deviceId).toBe(`kname:${a.device}`);
    }
    expect(plan.actions.find((a) => a.op === "vgcreate")).toMatchObject({
      devices: ["/dev/sdb", "/dev/sdc"],
      deviceIds: ["kname:/dev/sdb", "kname:/dev/sdc"],
    });
  });

  test("claims and lvmd config", () => {
    expect(plan.volumeGroups[0]!.claimed.map((c) => [c.kname, c.member])).toEqual([
      ["/dev/sdb", false],
      ["/dev/sdc", false],
    ]);
    expect(plan.lvmd).toEqual({
      "socket-name": "/run/topolvm/lvmd.sock",
      "device-classes": [
        {
          name: "thin",
          "volume-group": "vg1",
          default: true,
          type: "thin",
          "spare-gb": 0,
          "thin-pool": { name: "pool0", "overprovision-ratio": 10 },
        },
      ],
    });
  });

  test("applying the plan converges: planning again gives no actions", () => {
    const after = applyPlanEffects(inv, plan);
    expect(planNode(after, spec).actions).toEqual([]);
    expect(planNode(after, spec, { currentLvmdConfig: plan.lvmd })).toMatchObject({
      actions: [],
      blocked: [],
    });
  });

  test("the order of devices in the inventory changes nothing", () => {
    const shuffled: NodeInventory = { ...inv, devices: [...inv.devices].reverse() };
    expect(planNode(shuffled, spec)).toEqual(plan);
  });
});

describe("forceWipeDevicesAndDestroyAllData", () => {
  const inv = inventory([disk("sdb", { signatures: [signature("xfs")] }), disk("sdc")]);
  test("without it the device with a signature is excluded and never written", () => {
    const plan = planNode(inv, spec);
    expect(argvs(plan).filter((a) => a.includes("/dev/sdb"))).toEqual([]);
    expect(plan.volumeGroups[0]!.excluded[0]!.reasons).toEqual([
      "/dev/sdb has existing signature xfs, which only forceWipeDevicesAndDestroyAllData erases",
    ]);
  });
  test("with it the device is wiped first, marked destructive", () => {
    const plan = planNode(
      inv,
      nodeSpec([knameGroup("vg1", ["sdb", "sdc"], { forceWipeDevicesAndDestroyAllData: true })]),
    );
    expect(plan.actions[0]).toMatchObject({
      op: "wipefs",
      argv: ["wipefs", "--all", "/dev/sdb"],
      destructive: true,
      deviceId: "kname:/dev/sdb",
    });
    expect(plan.volumeGroups[0]!.claimed[0]).toMatchObject({ kname: "/dev/sdb", wipe: ["xfs"] });
    expect(argvs(plan).slice(0, 3)).toEqual([
      "wipefs --all /dev/sdb",
      "pvcreate /dev/sdb",
      "pvcreate /dev/sdc",
    ]);
  });
});

/** A node whose vg1 (ours) has members sdb and sdc with a thin pool of `poolExtents`. */
function existing(o: { used?: number; poolExtents?: number; extra?: ReturnType<typeof disk>[] } = {}) {
  const g = volumeGroup("vg1", [
    { device: disk("sdb", { wwn: "0x5000c500000000b1", serial: "B1" }), used: o.used ?? 0 },
    { device: disk("sdc", { wwn: "0x5000c500000000c1", serial: "C1" }) },
  ]);
  const lvs = o.poolExtents ? [thinPoolLv("vg1", "pool0", o.poolExtents)] : [];
  const used = (o.used ?? 0) + (o.poolExtents ?? 0);
  const vg = {
    ...g.vg,
    freeExtentCount: g.vg.extentCount - used,
    free: (g.vg.extentCount - used) * g.vg.extentSize,
  };
  return inventory(
    [
      asMember(disk("sdb", { wwn: "0x5000c500000000b1", serial: "B1" })),
      asMember(disk("sdc", { wwn: "0x5000c500000000c1", serial: "C1" })),
      ...(o.extra ?? []),
    ],
    { pvs: g.pvs, vgs: [vg], lvs },
  );
}

describe("existing volume group, exact thin pool sizes", () => {
  const E = 2 * EXTENTS_PER_DISK; // 51198
  test("a missing pool is created with exact extents and metadata (90% of 51198 = 46078; 90MiB metadata)", () => {
    const plan = planNode(existing(), spec);
    expect(argvs(plan)).toEqual([
      "lvcreate --type thin-pool --name pool0 --extents 46078 --poolmetadatasize 92m --zero y --addtag pulumi-lvm vg1",
      "write /etc/topolvm/lvmd.yaml",
    ]);
    expect(plan.volumeGroups[0]!.thinPools).toEqual([
      { name: "pool0", deviceClass: "thin", exists: false, targetExtents: 46078 },
    ]);
  });
  test("at 100% the data is what is left after metadata and its spare", () => {
    const full: LVMNodeSpec = {
      ...spec,
      deviceClasses: [
        { ...spec.deviceClasses![0]!, thin: { poolName: "pool0", sizePercent: 100, overprovisionRatio: 10 } },
      ],
    };
    const plan = planNode(existing(), full);
    expect(plan.actions[0]!.argv).toEqual([
      "lvcreate",
      "--type",
      "thin-pool",
      "--name",
      "pool0",
      "--extents",
      String(E - 2 * 25),
      "--poolmetadatasize",
      "100m",
      "--zero",
      "y",
      "--addtag",
      "pulumi-lvm",
      "vg1",
    ]);
  });
  test("chunk and metadata sizes from the spec", () => {
    const custom: LVMNodeSpec = {
      ...spec,
      deviceClasses: [
        {
          ...spec.deviceClasses![0]!,
          thin: {
            poolName: "pool0",
            sizePercent: 50,
            overprovisionRatio: 4,
            chunkSize: "256Ki",
            metadataSize: "1Gi",
          },
        },
      ],
    };
    expect(planNode(existing(), custom).actions[0]!.argv).toEqual([
      "lvcreate",
      "--type",
      "thin-pool",
      "--name",
      "pool0",
      "--extents",
      "25599",
      "--chunksize",
      "256k",
      "--poolmetadatasize",
      "1g",
      "--zero",
      "y",
      "--addtag",
      "pulumi-lvm",
      "vg1",
    ]);
  });
  test("a pool at its target: nothing to do", () => {
    const plan = planNode(existing({ poolExtents: 46078 }), spec, {
      currentLvmdConfig: planNode(existing(), spec).lvmd,
    });
    expect(plan.actions).toEqual([]);
    expect(plan.volumeGroups[0]!.claimed.map((c) => c.id)).toEqual([
      "wwn:0x5000c500000000b1+serial:B1",
      "wwn:0x5000c500000000c1+serial:C1",
    ]);
  });
  test("a pool below its target (sizePercent raised) is extended exactly, never shrunk", () => {
    expect(argvs(planNode(existing({ poolExtents: 20000 }), spec))[0]).toBe(
      "lvextend --extents 46078 vg1/pool0",
    );
    expect(
      planNode(existing({ poolExtents: 50000 }), spec).actions.filter((a) => a.op.includes("thinpool")),
    ).toEqual([]);
  });
  test("an LV with the pool's name that is not a thin pool blocks its device class", () => {
    const inv = existing();
    const plan = planNode(
      { ...inv, lvs: [{ name: "pool0", vgName: "vg1", uuid: "x", size: GiB, attr: "-wi-a-----", tags: [] }] },
      spec,
    );
    expect(plan.blocked).toEqual([
      {
        volumeGroup: "vg1",
        reason:
          "vg1/pool0 exists and is not a thin pool (lv_attr -wi-a-----), so device class thin is not configured",
      },
    ]);
    expect(plan.lvmd["device-classes"]).toEqual([]);
  });
  test("when the group grows, the pool grows to its percentage of the new size (lvm computes it)", () => {
    const grow = nodeSpec([knameGroup("vg1", ["sdb", "sdc", "sdd"])]);
    const plan = planNode(existing({ poolExtents: 46078, extra: [disk("sdd")] }), grow);
    expect(argvs(plan)).toEqual([
      "pvcreate /dev/sdd",
      "vgextend vg1 /dev/sdd",
      "pvchange --addtag pulumi-lvm.kname=sdd /dev/sdd",
      "lvextend --extents 90%VG vg1/pool0",
      "write /etc/topolvm/lvmd.yaml",
    ]);
  });
});

describe("a kernel rename after a reboot (sdb ↔ sdc)", () => {
  // Before: vg1 = {sdb (wwn A)}; sdc (wwn B) is someone else's blank disk. After the reboot the kernel
  // named them the other way round.
  const g = volumeGroup("vg1", [{ device: disk("sdc", { wwn: "0xa" }), joinedAs: "/dev/sdb" }]);
  const renamed = inventory([asMember(disk("sdc", { wwn: "0xa" })), disk("sdb", { wwn: "0xb" })], {
    pvs: g.pvs,
    vgs: [
      {
        ...g.vg,
        freeExtentCount: g.vg.extentCount - 23100,
        free: (g.vg.extentCount - 23100) * g.vg.extentSize,
      },
    ],
    lvs: [thinPoolLv("vg1", "pool0", 23039)],
  });
  const sdbOnly = nodeSpec([knameGroup("vg1", ["sdb"])]);

  test("the member stays a member, the disk that took its name is not claimed, nothing is done", () => {
    const plan = planNode(renamed, sdbOnly, { currentLvmdConfig: planNode(renamed, sdbOnly).lvmd });
    expect(plan.volumeGroups[0]!.claimed).toEqual([
      {
        kname: "/dev/sdc",
        path: "/dev/sdc",
        id: "wwn:0xa",
        size: 100 * GiB,
        member: true,
        renamedFrom: "/dev/sdb",
      },
    ]);
    expect(plan.volumeGroups[0]!.leaving).toBeUndefined();
    expect(plan.volumeGroups[0]!.excluded).toEqual([]);
    expect(plan.actions).toEqual([]);
  });
});

describe("devices leaving the selector", () => {
  const onlySdc = nodeSpec([knameGroup("vg1", ["sdc"])]);
  test("allocated extents move to the remaining PVs first, then vgreduce and pvremove", () => {
    const plan = planNode(existing({ used: 1000 }), onlySdc);
    expect(argvs(plan).filter((a) => !a.startsWith("write") && !a.startsWith("lvcreate"))).toEqual([
      "pvmove --interval 1 /dev/sdb /dev/sdc",
      "vgreduce vg1 /dev/sdb",
      "pvremove /dev/sdb",
    ]);
    expect(plan.volumeGroups[0]!.leaving).toMatchObject([{ kname: "/dev/sdb", member: true }]);
  });
  test("an empty PV leaves without pvmove", () => {
    expect(argvs(planNode(existing(), onlySdc)).slice(0, 2)).toEqual([
      "vgreduce vg1 /dev/sdb",
      "pvremove /dev/sdb",
    ]);
  });
  test("a replacement disk joins before the data moves onto it", () => {
    const plan = planNode(
      existing({ used: 1000, extra: [disk("sdd")] }),
      nodeSpec([knameGroup("vg1", ["sdc", "sdd"])]),
    );
    expect(argvs(plan).slice(0, 6)).toEqual([
      "pvcreate /dev/sdd",
      "vgextend vg1 /dev/sdd",
      "pvchange --addtag pulumi-lvm.kname=sdd /dev/sdd",
      "pvmove --interval 1 /dev/sdb /dev/sdc /dev/sdd",
      "vgreduce vg1 /dev/sdb",
      "pvremove /dev/sdb",
    ]);
  });
  test("without room on the others the PV stays, with the numbers", () => {
    const g = volumeGroup("vg1", [
      { device: disk("sdb"), used: 20000 },
      { device: disk("sdc"), used: 20000 },
    ]);
    const inv = inventory([asMember(disk("sdb")), asMember(disk("sdc"))], { pvs: g.pvs, vgs: [g.vg] });
    const plan = planNode(inv, onlySdc);
    expect(plan.actions.filter((a) => a.device === "/dev/sdb")).toEqual([]);
    expect(plan.blocked).toContainEqual({
      volumeGroup: "vg1",
      device: "/dev/sdb",
      reason:
        "/dev/sdb left the selector of vg1 but stays: moving its 20000 allocated extents (78.1Gi) needs that much free space on the remaining physical volumes, which have 5599 free extents (21.9Gi)",
    });
  });
  test("a group is never emptied", () => {
    const plan = planNode(existing(), nodeSpec([knameGroup("vg1", ["sdx"])]));
    expect(
      plan.actions.filter((a) => a.op === "vgreduce" || a.op === "pvremove" || a.op === "pvmove"),
    ).toEqual([]);
    expect(plan.blocked[0]!.reason).toBe(
      "the selector of vg1 selects none of its physical volumes (/dev/sdb and /dev/sdc); a volume group is never emptied by a plan, remove it with a teardown",
    );
  });
});

describe("what the planner refuses", () => {
  test("a volume group missing a PV is left alone", () => {
    const inv = existing({ extra: [disk("sdd")] });
    const missing = {
      ...inv,
      pvs: [
        ...inv.pvs,
        { device: "[unknown]", uuid: "gone-1", vgName: "vg1", size: GiB, free: GiB, tags: [] },
      ],
    };
    const plan = planNode(missing, nodeSpec([knameGroup("vg1", ["sdb", "sdc", "sdd"])]));
    expect(plan.actions).toEqual([]);
    expect(plan.blocked).toEqual([
      {
        volumeGroup: "vg1",
        reason:
          "volume group vg1 is missing physical volume pv:gone-1; nothing changes in it until it is back, or until its missingDevicePolicy removes it (RemoveFromGroup)",
      },
    ]);
    expect(plan.volumeGroups[0]!.excluded[0]!.reasons).toEqual([
      "/dev/sdd is not added while volume group vg1 is missing physical volume gone-1",
    ]);
  });
  test("no usable device: no group, no device class, blocked", () => {
    const plan = planNode(inventory([disk("sdb", { readOnly: true })]), spec);
    expect(plan.actions).toEqual([]);
    expect(plan.blocked).toEqual([
      {
        volumeGroup: "vg1",
        reason: "volume group vg1 has no usable devices on this node, so it is not created",
      },
    ]);
    expect(plan.lvmd["device-classes"]).toEqual([]);
  });
  test("a group of that name without our tag is never touched", () => {
    const g = volumeGroup("vg1", [{ device: disk("sdb") }], { tags: [] });
    const plan = planNode(inventory([asMember(disk("sdb")), disk("sdc")], { pvs: g.pvs, vgs: [g.vg] }), spec);
    expect(plan.actions).toEqual([]);
    expect(plan.blocked[0]!.reason).toBe(
      "volume group vg1 exists on this node without the pulumi-lvm tag; pulumi-lvm does not own it and changes nothing in it",
    );
  });
});

describe("lvmd.yaml", () => {
  test("written when the agent's copy differs, not when it matches", () => {
    const converged = existing({ poolExtents: 46078 });
    const desired = planNode(converged, spec).lvmd;
    expect(planNode(converged, spec, { currentLvmdConfig: desired }).actions).toEqual([]);
    expect(argvs(planNode(converged, spec, { currentLvmdConfig: null }))).toEqual([
      "write /etc/topolvm/lvmd.yaml",
    ]);
    const other = planNode(converged, spec, {
      currentLvmdConfig: { ...desired, "device-classes": [] },
      lvmdConfigPath: "/etc/lvmd/lvmd.yaml",
    });
    expect(other.actions).toMatchObject([
      { op: "write-lvmd-config", argv: [], file: { path: "/etc/lvmd/lvmd.yaml" } },
    ]);
  });
  test("a thick device class gets spare-gb 0", () => {
    const plan = planNode(
      existing(),
      nodeSpec(
        [knameGroup("vg1", ["sdb", "sdc"])],
        [{ name: "fast", strategy: "Thick", volumeGroup: "vg1" }],
      ),
    );
    expect(plan.lvmd["device-classes"]).toEqual([
      { name: "fast", "volume-group": "vg1", type: "thick", "spare-gb": 0 },
    ]);
  });
});

describe("orphan PVs the agent created before an interruption", () => {
  const inv = inventory([asMember(disk("sdb")), disk("sdc")], {
    pvs: [{ device: "/dev/sdb", uuid: "o1", vgName: "", size: 100 * GiB, free: 100 * GiB, tags: [] }],
  });
  test("are not reused unless the agent says it made them", () => {
    expect(planNode(inv, spec).volumeGroups[0]!.claimed.map((c) => c.kname)).toEqual(["/dev/sdc"]);
  });
  test("adopted: join without pvcreate or wipe", () => {
    const plan = planNode(inv, spec, { adoptOrphanPvs: ["pv:o1"] });
    expect(planNode(inv, spec, { adoptOrphanPvs: ["kname:/dev/sdb"] }).actions).toEqual(plan.actions);
    expect(plan.volumeGroups[0]!.claimed).toMatchObject([
      { kname: "/dev/sdb", adopted: true },
      { kname: "/dev/sdc" },
    ]);
    expect(argvs(plan).slice(0, 2)).toEqual([
      "pvcreate /dev/sdc",
      "vgcreate --addtag pulumi-lvm vg1 /dev/sdb /dev/sdc",
    ]);
  });
});

test("the hash covers the spec: a different spec, a different hash", () => {
  const inv = inventory([disk("sdb"), disk("sdc")]);
  const a = planNode(inv, spec);
  const b = planNode(inv, { ...spec, deviceClasses: [{ ...spec.deviceClasses![0]!, fsType: "ext4" }] });
  expect(a.actions).toEqual(b.actions);
  expect(a.hash).not.toBe(b.hash);
  expect(a.hash).toMatch(/^[0-9a-f]{64}$/);
});

test("orderActions sorts by kind in the given order, keeps the order within a kind, puts unknown kinds first", () => {
  const a = (op: Parameters<typeof step>[0], n: number) => step(op, [op, String(n)], `${op} ${n}`);
  const actions = [
    a("vgcreate", 1),
    a("pvcreate", 1),
    a("lvremove-thinpool", 1),
    a("pvcreate", 2),
    a("wipefs", 1),
    a("vgcreate", 2),
    a("lvremove-thinpool", 2),
  ];
  expect(orderActions(actions).map((x) => x.reason)).toEqual([
    "lvremove-thinpool 1",
    "lvremove-thinpool 2",
    "wipefs 1",
    "pvcreate 1",
    "pvcreate 2",
    "vgcreate 1",
    "vgcreate 2",
  ]);
  expect(orderActions(actions, ["vgcreate", "pvcreate"]).map((x) => x.reason)).toEqual([
    "lvremove-thinpool 1",
    "wipefs 1",
    "lvremove-thinpool 2",
    "vgcreate 1",
    "vgcreate 2",
    "pvcreate 1",
    "pvcreate 2",
  ]);
  expect(actions[0]!.reason).toBe("vgcreate 1"); // the input is left as it was
  expect(orderActions([])).toEqual([]);
});
