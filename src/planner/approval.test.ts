import fc from "fast-check";
import { APPROVAL_POLICIES, type ApprovalPolicy } from "../api/approval";
import { planNode } from "./plan-node";
import { nodeArb, specArb } from "../../test/support/planner/arbitraries";
import { DESTRUCTIVE_REASONS, stepsNeedingApproval } from "./approval";
import type { ActionOp, NodePlan } from "./types";

const NEW_GROUP = { name: "vg-new", exists: false };
const OLD_GROUP = { name: "vg-old", exists: true };

function planOf(op: ActionOp, volumeGroup: string): Pick<NodePlan, "actions" | "volumeGroups"> {
  return {
    volumeGroups: [NEW_GROUP, OLD_GROUP] as unknown as NodePlan["volumeGroups"],
    actions: [{ op, argv: [op], volumeGroup, device: "/dev/sdx", reason: "test" }],
  };
}

/** Every step kind, in a new and in an existing group: held back under Destructive? (the docs' table) */
const TABLE: Array<[ActionOp, string, boolean]> = [
  ["vgreduce-removemissing", "vg-old", true], // with lostVolumes it waits under Automatic too (below)
  ["wipefs", "vg-new", true],
  ["wipefs", "vg-old", true],
  ["pvcreate", "vg-new", false],
  ["pvcreate", "vg-old", true],
  ["lvmdevices-adddev", "vg-new", false],
  ["lvmdevices-adddev", "vg-old", false],
  ["lvmdevices-deldev", "vg-old", true],
  ["vgcreate", "vg-new", false],
  ["vgextend", "vg-old", true],
  ["pvchange", "vg-new", false],
  ["pvchange", "vg-old", false],
  ["pvmove", "vg-old", true],
  ["vgreduce", "vg-old", true],
  ["pvremove", "vg-old", true],
  ["lvcreate-thinpool", "vg-new", false],
  ["lvcreate-thinpool", "vg-old", false],
  ["lvextend-thinpool", "vg-old", false],
  ["lvextend-thinpool-metadata", "vg-old", false],
  ["lvchange-deactivate", "vg-old", true],
  ["lvremove-thinpool", "vg-old", true],
  ["vgremove", "vg-old", true],
  ["write-lvmd-config", "vg-new", false],
];

test("the table covers every step kind", () => {
  expect(new Set(TABLE.map((r) => r[0]))).toEqual(new Set(Object.keys(DESTRUCTIVE_REASONS)));
});

test.each(TABLE)("%s in %s: Automatic never, Destructive %s, Always always", (op, vg, destructive) => {
  const plan = planOf(op, vg);
  expect(stepsNeedingApproval(plan, "Automatic")).toEqual([]);
  const held = stepsNeedingApproval(plan, "Destructive");
  expect(held.length).toBe(destructive ? 1 : 0);
  if (destructive)
    expect(held[0]).toMatchObject({ index: 0, op, device: "/dev/sdx", why: expect.any(String) });
  expect(stepsNeedingApproval(plan, "Always")).toHaveLength(1);
});

test("a repair that removes volumes (lostVolumes) waits under every policy, Automatic too", () => {
  const repair = {
    volumeGroups: [OLD_GROUP] as unknown as NodePlan["volumeGroups"],
    actions: [
      {
        op: "vgreduce-removemissing" as const,
        argv: ["vgreduce", "--removemissing", "--force", "vg-old"],
        volumeGroup: "vg-old",
        lostVolumes: ["vg-old/lv1"],
        reason: "",
      },
    ],
  };
  for (const policy of APPROVAL_POLICIES)
    expect(stepsNeedingApproval(repair, policy)).toEqual([
      { index: 0, op: "vgreduce-removemissing", why: expect.stringMatching(/under every approvalPolicy/) },
    ]);
});

test("a device the group held before rejoining it (an out-of-band vgreduce repaired) does not wait; a new one does", () => {
  const plan = {
    volumeGroups: [OLD_GROUP] as unknown as NodePlan["volumeGroups"],
    actions: [
      {
        op: "pvcreate" as const,
        argv: [],
        volumeGroup: "vg-old",
        device: "/dev/sdb",
        deviceId: "wwn:b",
        reason: "",
      },
      { op: "vgextend" as const, argv: [], volumeGroup: "vg-old", device: "/dev/sdc", reason: "" },
    ],
  };
  expect(stepsNeedingApproval(plan, "Destructive", new Set(["wwn:b"])).map((s) => s.device)).toEqual([
    "/dev/sdc",
  ]);
  expect(stepsNeedingApproval(plan, "Destructive", new Set(["/dev/sdc", "wwn:b"]))).toEqual([]);
});

test("every step of a plan is listed with its index; Always says why a harmless step waits", () => {
  const plan = {
    volumeGroups: [OLD_GROUP] as unknown as NodePlan["volumeGroups"],
    actions: [
      { op: "wipefs" as const, argv: [], volumeGroup: "vg-old", device: "/dev/sdb", reason: "" },
      { op: "write-lvmd-config" as const, argv: [], reason: "" },
    ],
  };
  expect(stepsNeedingApproval(plan, "Always").map((s) => [s.index, s.op, s.why])).toEqual([
    [0, "wipefs", expect.stringContaining("erases the signatures")],
    [1, "write-lvmd-config", "every step waits (Always)"],
  ]);
});

test("properties over generated plans: Automatic never waits; Always waits iff steps; Destructive ⊆ Always", () => {
  fc.assert(
    fc.property(nodeArb, specArb, (inv, spec) => {
      const plan = planNode(inv, spec);
      const held = (p: ApprovalPolicy) => stepsNeedingApproval(plan, p).map((s) => s.index);
      expect(held("Automatic")).toEqual([]);
      expect(held("Always")).toEqual(plan.actions.map((_, i) => i));
      const always = new Set(held("Always"));
      expect(held("Destructive").every((i) => always.has(i))).toBe(true);
      // Every wipe waits under every policy but Automatic.
      for (const p of APPROVAL_POLICIES.filter((x) => x !== "Automatic"))
        for (const [i, a] of plan.actions.entries()) if (a.op === "wipefs") expect(held(p)).toContain(i);
    }),
    { numRuns: 200 },
  );
});
