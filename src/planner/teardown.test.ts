import type { LogicalVolume } from "../inventory/types";
import { planNode } from "./plan-node";
import { applyPlanEffects } from "./simulate";
import { planTeardown } from "./teardown";
import {
  asMember,
  disk,
  inventory,
  knameGroup,
  nodeSpec,
  volumeGroup,
} from "../../test/support/planner/testing";

const spec = nodeSpec(
  [knameGroup("vg1", ["sdb", "sdc"]), knameGroup("vg2", ["sdd"])],
  [
    {
      name: "thin",
      strategy: "Thin",
      volumeGroup: "vg1",
      default: true,
      thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
    },
    { name: "fast", strategy: "Thick", volumeGroup: "vg2" },
  ],
);
/** vg1 and vg2 created and converged by the planner, as the simulator applies it. */
const built = applyPlanEffects(
  inventory([disk("sdb"), disk("sdc"), disk("sdd")]),
  planNode(inventory([disk("sdb"), disk("sdc"), disk("sdd")]), spec),
);
const argvs = (p: { actions: readonly { op: string; argv: readonly string[]; file?: { path: string } }[] }) =>
  p.actions.map((a) => (a.op === "write-lvmd-config" ? `write ${a.file!.path}` : a.argv.join(" ")));
const thinVolume = (name: string): LogicalVolume => ({
  name,
  vgName: "vg1",
  uuid: name,
  size: 1 << 30,
  attr: "Vwi-aotz--",
  poolLv: "pool0",
  tags: [],
});

describe("planTeardown", () => {
  test("an apply stopped after pvcreate: the orphan PVs this agent created lose their label; any other orphan stays", () => {
    const fresh = inventory([disk("sdb"), disk("sdc"), disk("sdd")]);
    const plan = planNode(fresh, spec);
    const pvcreates = plan.actions.filter((a) => a.op === "pvcreate");
    expect(pvcreates.map((a) => a.argv.join(" "))).toEqual([
      "pvcreate /dev/sdb",
      "pvcreate /dev/sdc",
      "pvcreate /dev/sdd",
    ]);
    const stopped = applyPlanEffects(fresh, { actions: pvcreates });
    const ours = stopped.pvs.filter((pv) => pv.device !== "/dev/sdd").map((pv) => `pv:${pv.uuid}`);
    expect(argvs(planTeardown(stopped, spec, { force: false }))).toEqual([]);
    expect(argvs(planTeardown(stopped, spec, { force: false, ownOrphanPvs: ours }))).toEqual([
      "write /etc/topolvm/lvmd.yaml",
      "pvremove /dev/sdb",
      "pvremove /dev/sdc",
    ]);
    // One group named: only that group's business.
    expect(
      argvs(planTeardown(stopped, spec, { volumeGroup: "vg1", force: false, ownOrphanPvs: ours })),
    ).toEqual([]);
    // Its effects leave no label of ours.
    const after = applyPlanEffects(
      stopped,
      planTeardown(stopped, spec, { force: false, ownOrphanPvs: ours }),
    );
    expect(after.pvs.map((pv) => pv.device)).toEqual(["/dev/sdd"]);
  });

  test("one group: lvmd first, then deactivate and remove the pool, the group, the PV labels", () => {
    const plan = planTeardown(built, spec, { volumeGroup: "vg1", force: false });
    expect(argvs(plan)).toEqual([
      "write /etc/topolvm/lvmd.yaml",
      "lvchange --activate n vg1/pool0",
      "lvremove vg1/pool0",
      "vgremove vg1",
      "pvremove /dev/sdb",
      "pvremove /dev/sdc",
    ]);
    expect(plan.lvmd["device-classes"].map((dc) => dc.name)).toEqual(["fast"]);
    expect(plan.blocked).toEqual([]);
    expect(plan.actions.some((a) => a.destructive)).toBe(false);
  });

  test("every group when none is named; the result holds no group of ours", () => {
    const plan = planTeardown(built, spec, { force: false });
    const after = applyPlanEffects(built, plan);
    expect(after.vgs).toEqual([]);
    expect(after.pvs).toEqual([]);
    expect(after.lvs).toEqual([]);
    expect(planTeardown(after, spec, { force: false }).actions).toEqual([]);
  });

  test("user volumes block it, listed by name", () => {
    const withVolumes = { ...built, lvs: [...built.lvs, thinVolume("pvc-1"), thinVolume("pvc-2")] };
    const plan = planTeardown(withVolumes, spec, { volumeGroup: "vg1", force: false });
    expect(plan.actions).toEqual([]);
    expect(plan.blocked).toEqual([
      {
        volumeGroup: "vg1",
        reason:
          "volume group vg1 still holds logical volumes pvc-1 and pvc-2; teardown removes it only with force, which destroys them",
      },
    ]);
  });

  test("force removes the group with its volumes, marked destructive", () => {
    const withVolumes = { ...built, lvs: [...built.lvs, thinVolume("pvc-1")] };
    const plan = planTeardown(withVolumes, spec, { volumeGroup: "vg1", force: true });
    expect(argvs(plan)).toEqual([
      "write /etc/topolvm/lvmd.yaml",
      "vgremove --force vg1",
      "pvremove /dev/sdb",
      "pvremove /dev/sdc",
    ]);
    expect(plan.actions[1]).toMatchObject({
      destructive: true,
      reason: "remove volume group vg1 with every logical volume in it (force): destroys pvc-1",
    });
    expect(applyPlanEffects(withVolumes, plan).vgs.map((v) => v.name)).toEqual(["vg2"]);
  });

  test("groups that are not ours are never touched, even with force", () => {
    const foreign = volumeGroup("vg1", [{ device: disk("sdb") }], { tags: [] });
    const inv = inventory([asMember(disk("sdb"))], { pvs: foreign.pvs, vgs: [foreign.vg] });
    const plan = planTeardown(inv, spec, { force: true });
    expect(plan.actions).toEqual([]);
    expect(plan.blocked).toEqual([
      {
        volumeGroup: "vg1",
        reason: "volume group vg1 does not carry the pulumi-lvm tag; teardown does not touch it",
      },
    ]);
  });

  test("a group not in the spec is refused", () => {
    const plan = planTeardown(built, spec, { volumeGroup: "other", force: true });
    expect(plan.actions).toEqual([]);
    expect(plan.blocked[0]!.reason).toBe(
      "volume group other is not in this node's spec (it has vg1 and vg2), so teardown does not touch it",
    );
  });
});
