import { applyPlanEffects, SimulationError } from "./simulate";
import { disk, inventory, signature } from "../../test/support/planner/testing";
import type { PlanAction } from "./types";

const act = (op: PlanAction["op"], ...argv: string[]): PlanAction => ({ op, argv, reason: "test" });

test("pvcreate on a device with a signature fails, as lvm would ask and read 'no'", () => {
  const inv = inventory([disk("sdb", { signatures: [signature("ext4")] })]);
  expect(() => applyPlanEffects(inv, { actions: [act("pvcreate", "pvcreate", "/dev/sdb")] })).toThrow(
    SimulationError,
  );
  const after = applyPlanEffects(inv, {
    actions: [act("wipefs", "wipefs", "--all", "/dev/sdb"), act("pvcreate", "pvcreate", "/dev/sdb")],
  });
  expect(after.devices[0]!.signatures.map((s) => s.type)).toEqual(["LVM2_member"]);
});

test("a new group's extents: (size - 1MiB) / 4MiB per PV, tags only once in a group", () => {
  const inv = inventory([disk("sdb"), disk("sdc")]);
  expect(() =>
    applyPlanEffects(inv, {
      actions: [
        act("pvcreate", "pvcreate", "/dev/sdb"),
        act("pvchange", "pvchange", "--addtag", "t", "/dev/sdb"),
      ],
    }),
  ).toThrow("Can't change tag on Physical Volume not in volume group");
  const after = applyPlanEffects(inv, {
    actions: [
      act("pvcreate", "pvcreate", "/dev/sdb"),
      act("pvcreate", "pvcreate", "/dev/sdc"),
      act("vgcreate", "vgcreate", "--addtag", "pulumi-lvm", "vg1", "/dev/sdb", "/dev/sdc"),
      act(
        "lvcreate-thinpool",
        "lvcreate",
        "--type",
        "thin-pool",
        "--name",
        "p",
        "--extents",
        "90%VG",
        "--zero",
        "y",
        "vg1",
      ),
    ],
  });
  expect(after.vgs[0]).toMatchObject({ name: "vg1", extentCount: 2 * 25599, tags: ["pulumi-lvm"] });
  // 90% of 51198 extents, 90MiB (23 extents) metadata and as much spare.
  expect(after.vgs[0]!.freeExtentCount).toBe(51198 - 46078 - 23 - 23);
  expect(after.lvs.map((lv) => [lv.name, lv.size / (4 * 1024 ** 2), lv.hidden ?? false])).toEqual([
    ["p", 46078, false],
    ["p_tmeta", 23, true],
    ["p_tdata", 46078, true],
    ["lvol0_pmspare", 23, true],
  ]);
});

test("not enough free extents fails", () => {
  const inv = inventory([disk("sdb")]);
  const actions = [
    act("pvcreate", "pvcreate", "/dev/sdb"),
    act("vgcreate", "vgcreate", "--addtag", "pulumi-lvm", "vg1", "/dev/sdb"),
    act(
      "lvcreate-thinpool",
      "lvcreate",
      "--type",
      "thin-pool",
      "--name",
      "p",
      "--extents",
      "25599",
      "--zero",
      "y",
      "vg1",
    ),
  ];
  expect(() => applyPlanEffects(inv, { actions })).toThrow(/Insufficient free space/);
});
