import type { VolumeGroup } from "../api";
import { planNode } from "./plan-node";
import {
  asMember,
  disk,
  inventory,
  knameGroup,
  nodeSpec,
  volumeGroup,
} from "../../test/support/planner/testing";

/**
 * deviceDiscoveryPolicy: with Static, a group that exists (its physical volumes, as the node's
 * inventory reports them, are the devices it was built with) takes no device that appears later;
 * with Dynamic (the default) such a device joins it, as before.
 */
const REASON = "/dev/sdc appeared after the group was built; discovery is Static";

/** Group a on sdb, built; sdc appeared since. Both are selected. */
function built(policy: VolumeGroup["deviceDiscoveryPolicy"]) {
  const a = volumeGroup("a", [{ device: disk("sdb") }]);
  const inv = inventory([asMember(disk("sdb")), disk("sdc")], { pvs: a.pvs, vgs: [a.vg] });
  const vg = knameGroup("a", ["sdb", "sdc"], policy ? { deviceDiscoveryPolicy: policy } : {});
  return planNode(inv, nodeSpec([vg]));
}

/** Neither sdb nor sdc is a physical volume yet: the group is being built. */
function fresh(policy: VolumeGroup["deviceDiscoveryPolicy"]) {
  const vg = knameGroup("a", ["sdb", "sdc"], policy ? { deviceDiscoveryPolicy: policy } : {});
  return planNode(inventory([disk("sdb"), disk("sdc")]), nodeSpec([vg]));
}

const argv = (plan: ReturnType<typeof planNode>) => plan.actions.map((a) => a.argv.join(" "));
const touchesSdc = (plan: ReturnType<typeof planNode>) => argv(plan).filter((a) => a.includes("/dev/sdc"));

describe.each([
  ["default (Dynamic)", undefined, true],
  ["Dynamic", "Dynamic" as const, true],
  ["Static", "Static" as const, false],
])("deviceDiscoveryPolicy %s", (_name, policy, joins) => {
  test(`a device that appears after the group was built ${joins ? "joins it" : "is excluded, and the plan says why"}`, () => {
    const plan = built(policy);
    const a = plan.volumeGroups[0]!;
    expect(a.claimed.map((c) => c.kname)).toEqual(joins ? ["/dev/sdb", "/dev/sdc"] : ["/dev/sdb"]);
    expect(a.excluded).toEqual(joins ? [] : [{ kname: "/dev/sdc", reasons: [REASON] }]);
    expect(touchesSdc(plan).length > 0).toBe(joins);
  });

  test("a group being built takes every device it selects", () => {
    const plan = fresh(policy);
    expect(plan.volumeGroups[0]!.claimed.map((c) => c.kname)).toEqual(["/dev/sdb", "/dev/sdc"]);
    expect(argv(plan).some((a) => a.startsWith("vgcreate") && a.includes("/dev/sdc"))).toBe(true);
  });

  test("the group's own physical volumes stay", () => {
    const plan = built(policy);
    expect(plan.volumeGroups[0]!.leaving ?? []).toEqual([]);
    expect(argv(plan).filter((a) => a.includes("/dev/sdb"))).toEqual([]);
  });
});
