import type { LVMNodeSpec } from "../../../src/api";
import { parseNodeInventory } from "../../../src/inventory/parse";
import { planNode } from "../../../src/planner";
import { disk, inventory, signature } from "../../../test/support/planner/testing";
import { loadRawFixture } from "../../../test/fixtures/inventory/load";
import { summarizePlan } from "./plan-summary";

/** Plans come from the real planner, on inventories recorded from loop devices or built with its helpers. */
const recorded = parseNodeInventory(loadRawFixture("host-loop-mixed"));

function byKname(knames: string[]) {
  return {
    deviceSelectorTerms: [
      { matchExpressions: [{ key: "kname" as const, operator: "In" as const, values: knames }] },
    ],
  };
}

describe("summarizePlan", () => {
  test("a new volume group: claimed devices, excluded devices with their reasons, every step", () => {
    const spec: LVMNodeSpec = {
      volumeGroups: [{ name: "vg-new", deviceSelector: byKname(["/dev/loop3", "/dev/loop1"]) }],
    };
    const plan = planNode(recorded, spec);
    const summary = summarizePlan(plan);
    expect(summary).toMatchObject({
      hash: plan.hash,
      selected: true,
      steps: plan.actions.length,
      claimed: ["/dev/loop1 → vg-new (new volume group)"],
      extended: [],
      removed: [],
      wiped: [],
      excluded: [
        "/dev/loop3: /dev/loop3 is mounted at /var/tmp/inv-fixtures/set/mnt/ext4 data; /dev/loop3 has existing signature ext4, which only forceWipeDevicesAndDestroyAllData erases",
      ],
      blocked: [],
    });
    expect(summary.actions).toEqual(
      plan.actions.map((a) => `${[a.op, a.device ?? a.volumeGroup].filter(Boolean).join(" ")}: ${a.reason}`),
    );
    expect(summary.actions[1]).toBe(
      "vgcreate vg-new: create volume group vg-new on /dev/loop1, tagged pulumi-lvm",
    );
  });

  test("an existing group: a device joins, a member the selector dropped leaves", () => {
    const spec: LVMNodeSpec = {
      volumeGroups: [{ name: "inv-fixture-owned", deviceSelector: byKname(["/dev/loop8", "/dev/loop0"]) }],
    };
    expect(summarizePlan(planNode(recorded, spec))).toMatchObject({
      claimed: [],
      extended: ["/dev/loop0 → inv-fixture-owned"],
      removed: ["/dev/loop9 ← inv-fixture-owned"],
    });
  });

  test("wiped devices name the signatures erased", () => {
    const node = inventory([disk("vdb", { signatures: [signature("xfs")] }), disk("vdc")]);
    const spec: LVMNodeSpec = {
      volumeGroups: [
        {
          name: "vg-data",
          deviceSelector: byKname(["/dev/vdb", "/dev/vdc"]),
          forceWipeDevicesAndDestroyAllData: true,
        },
      ],
    };
    const summary = summarizePlan(planNode(node, spec));
    expect(summary.wiped).toEqual(["/dev/vdb: xfs"]);
    expect(summary.claimed).toEqual([
      "/dev/vdb → vg-data (new volume group)",
      "/dev/vdc → vg-data (new volume group)",
    ]);
    expect(summary.actions[0]).toMatch(/^wipefs \/dev\/vdb: /);
  });

  test("a selector value that names no device is listed as excluded, with the planner's reason", () => {
    const spec: LVMNodeSpec = {
      volumeGroups: [{ name: "vg-data", deviceSelector: byKname(["/dev/nvme9n9"]) }],
    };
    const plan = planNode(inventory([disk("vdc")]), spec);
    const summary = summarizePlan(plan);
    expect(summary.claimed).toEqual([]);
    expect(summary.excluded).toEqual([
      `/dev/nvme9n9: ${plan.volumeGroups[0]!.excluded[0]!.reasons.join("; ")}`,
    ]);
  });

  test("blocked entries read volume group: device: reason", () => {
    const plan = planNode(inventory([disk("vdc")]), {
      volumeGroups: [{ name: "vg-data", deviceSelector: byKname(["/dev/vdc"]) }],
    });
    const summary = summarizePlan({
      ...plan,
      blocked: [
        { volumeGroup: "vg-data", device: "/dev/vdd", reason: "pvmove would not fit" },
        { reason: "no lvm" },
      ],
    });
    expect(summary.blocked).toEqual(["vg-data: /dev/vdd: pvmove would not fit", "no lvm"]);
  });
});
