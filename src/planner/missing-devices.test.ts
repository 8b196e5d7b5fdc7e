import type { MissingDevicePolicy } from "../api/template";
import type { LogicalVolume, NodeInventory } from "../inventory/types";
import {
  asMember,
  disk,
  GiB,
  inventory,
  knameGroup,
  nodeSpec,
  volumeGroup,
} from "../../test/support/planner/testing";
import { stepsNeedingApproval } from "./approval";
import { lostVolumes } from "./missing-devices";
import { planNode } from "./plan-node";
import { applyPlanEffects } from "./simulate";

const lv = (name: string, attr: string, o: Partial<LogicalVolume> = {}): LogicalVolume => ({
  name,
  vgName: "vg1",
  uuid: `uuid-${name}`,
  size: GiB,
  attr,
  tags: [],
  ...o,
});

describe("lostVolumes: what has data on a missing physical volume", () => {
  test.each<[string, LogicalVolume[], string[]]>([
    ["nothing partial", [lv("lv1", "-wi-a-----"), lv("pool0", "twi-a-tz--")], []],
    ["a partial linear volume", [lv("lv1", "-wi-----p-"), lv("lv2", "-wi-a-----")], ["lv1"]],
    [
      "a pool whose hidden data volume is partial, and every thin volume in it",
      [
        lv("pool0", "twi---tz--"),
        lv("pool0_tdata", "Twi-----p-", { hidden: true }),
        lv("pool0_tmeta", "ewi-------", { hidden: true }),
        lv("thin10", "Vwi---tz--", { poolLv: "pool0" }),
        lv("thin2", "Vwi---tz--", { poolLv: "pool0" }),
        lv("lv1", "-wi-a-----"),
      ],
      ["pool0", "thin2", "thin10"],
    ],
    [
      "a partial metadata spare, named as lvs -a shows it",
      [lv("lvol0_pmspare", "ewi-----p-", { hidden: true })],
      ["[lvol0_pmspare]"],
    ],
  ])("%s", (_what, lvs, expected) => {
    expect(lostVolumes(lvs)).toEqual(expected);
  });
});

/** vg1 on sdb and a disk that died (pv "gone-1"), with `lvs` in it. */
function degraded(lvs: LogicalVolume[]): NodeInventory {
  const g = volumeGroup("vg1", [{ device: disk("sdb") }, { device: disk("sdc") }]);
  const gone = { ...g.pvs[1]!, device: "[unknown]", uuid: "gone-1", missing: true };
  return inventory([asMember(disk("sdb"))], { pvs: [g.pvs[0]!, gone], vgs: [g.vg], lvs });
}
const spec = (policy?: MissingDevicePolicy) =>
  nodeSpec([knameGroup("vg1", ["sdb"], policy ? { missingDevicePolicy: policy } : {})]);
const LOST = [lv("data1", "-wi-----p-"), lv("data2", "-wi-a-----")];
const INTACT = [lv("data2", "-wi-a-----")];

describe("a volume group missing a disk, by its missingDevicePolicy", () => {
  test.each<[string, MissingDevicePolicy | undefined, LogicalVolume[], string[], RegExp | undefined]>([
    [
      "Wait (the default): nothing, blocked naming the lost volume",
      undefined,
      LOST,
      [],
      /^volume group vg1 is missing physical volume pv:gone-1, which holds data of logical volume data1; nothing changes in it until it is back, or until its missingDevicePolicy removes it \(RemoveWithLostVolumes\)$/,
    ],
    [
      "Wait with nothing lost names RemoveFromGroup",
      "Wait",
      INTACT,
      [],
      /^volume group vg1 is missing physical volume pv:gone-1; nothing changes .*\(RemoveFromGroup\)$/,
    ],
    [
      "RemoveFromGroup, nothing lost: vgreduce --removemissing",
      "RemoveFromGroup",
      INTACT,
      ["vgreduce --removemissing vg1"],
      undefined,
    ],
    [
      "RemoveFromGroup with a volume on the disk: blocked, never --force",
      "RemoveFromGroup",
      LOST,
      [],
      /holds data of logical volume data1; missingDevicePolicy RemoveFromGroup does not remove logical volumes/,
    ],
    [
      "RemoveWithLostVolumes, nothing lost: no --force",
      "RemoveWithLostVolumes",
      INTACT,
      ["vgreduce --removemissing vg1"],
      undefined,
    ],
    [
      "RemoveWithLostVolumes with a volume on the disk: --force, naming it",
      "RemoveWithLostVolumes",
      LOST,
      ["vgreduce --removemissing --force vg1"],
      undefined,
    ],
  ])("%s", (_what, policy, lvs, argvs, blocked) => {
    const plan = planNode(degraded(lvs), spec(policy));
    expect(plan.actions.filter((a) => a.op !== "write-lvmd-config").map((a) => a.argv.join(" "))).toEqual(
      argvs,
    );
    if (blocked) expect(plan.blocked.map((b) => b.reason)).toEqual([expect.stringMatching(blocked)]);
    else expect(plan.blocked).toEqual([]);
  });

  test("the forced repair is destructive, names what it removes, and waits for an approval under every policy", () => {
    const plan = planNode(degraded(LOST), spec("RemoveWithLostVolumes"));
    const repair = plan.actions[0]!;
    expect(repair).toMatchObject({
      op: "vgreduce-removemissing",
      destructive: true,
      volumeGroup: "vg1",
      missingPvs: ["pv:gone-1"],
      lostVolumes: ["vg1/data1"],
      reason:
        "remove the missing physical volume pv:gone-1 from vg1 (its device is gone; should it come back, it is no longer a member), and with it the logical volume data1, whose data is lost",
    });
    for (const policy of ["Automatic", "Destructive", "Always"] as const)
      expect(
        stepsNeedingApproval(plan, policy)
          .filter((h) => h.op === "vgreduce-removemissing")
          .map((h) => [h.op, h.why]),
      ).toEqual([
        ["vgreduce-removemissing", expect.stringMatching(/waits for an approval under every approvalPolicy/)],
      ]);
  });

  test("the plain repair waits under Destructive and Always, not Automatic", () => {
    const plan = planNode(degraded(INTACT), spec("RemoveFromGroup"));
    expect(plan.actions[0]!.destructive).toBeUndefined();
    expect(stepsNeedingApproval(plan, "Automatic")).toEqual([]);
    expect(stepsNeedingApproval(plan, "Destructive").map((h) => h.op)).toEqual(["vgreduce-removemissing"]);
  });

  test("the policy changes the plan's hash: an approval of a Wait plan never approves a repair", () => {
    expect(planNode(degraded(LOST), spec("RemoveWithLostVolumes")).hash).not.toBe(
      planNode(degraded(LOST), spec()).hash,
    );
  });

  test("after the repair the group misses nothing and the next plan is the group's usual one", () => {
    const inv = degraded(LOST);
    const after = applyPlanEffects(inv, planNode(inv, spec("RemoveWithLostVolumes")));
    expect(after.pvs.map((pv) => pv.uuid)).not.toContain("gone-1");
    expect(after.lvs.map((l) => l.name)).toEqual(["data2"]);
    expect(after.vgs[0]!.extentCount).toBe(volumeGroup("vg1", [{ device: disk("sdb") }]).vg.extentCount);
    const next = planNode(after, spec("RemoveWithLostVolumes"));
    expect(next.blocked).toEqual([]);
    expect(next.actions.map((a) => a.op)).not.toContain("vgreduce-removemissing");
  });
});
