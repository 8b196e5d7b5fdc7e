import { createHash } from "node:crypto";
import fc from "fast-check";
import type { LVMNodeSpec } from "../api";
import type { NodeInventory } from "../inventory/types";
import { nodeArb, specArb } from "../../test/support/planner/arbitraries";
import { planNode } from "./plan-node";
import { applyPlanEffects } from "./simulate";
import { planTeardown } from "./teardown";
import type { NodePlan } from "./types";

/**
 * Golden output over generated nodes (plan-golden.test.ts pins synthetic fleets and the examples):
 * 1,500 (node, spec) pairs drawn by fast-check from a fixed seed, each planned four ways (as is; with
 * its orphan PVs adopted and no lvmd.yaml read; once the first plan has been applied, with the lvmd.yaml
 * it wrote; torn down with force), the plans' JSON (every claim, exclusion, reason, argv and hash)
 * pinned by one sha256. The digest was recorded with main's planner (9b8dc51) before the planner's
 * second round of performance work (issue 18): that work must not change a byte of any plan.
 */

const SEED = 20261126;
const PAIRS = 1500;

function plansOf(pairs: readonly (readonly [NodeInventory, LVMNodeSpec])[]): NodePlan[] {
  const plans: NodePlan[] = [];
  for (const [inv, spec] of pairs) {
    const first = planNode(inv, spec);
    const orphans = inv.pvs.filter((pv) => !pv.vgName).map((pv) => `pv:${pv.uuid}`);
    plans.push(first, planNode(inv, spec, { adoptOrphanPvs: orphans, currentLvmdConfig: null }));
    plans.push(planNode(applyPlanEffects(inv, first), spec, { currentLvmdConfig: first.lvmd }));
    plans.push(planTeardown(inv, spec, { force: true }));
  }
  return plans;
}

test("generated nodes and specs give the recorded plans", () => {
  const pairs = fc.sample(fc.tuple(nodeArb, specArb), { seed: SEED, numRuns: PAIRS });
  const plans = plansOf(pairs);
  expect(plans).toHaveLength(4 * PAIRS);
  // Not a trivial table: it holds every kind of step but lvextend-thinpool-metadata.
  const ops = new Set(plans.flatMap((p) => p.actions.map((a) => a.op)));
  expect([...ops].sort().join(" ")).toBe(
    "lvchange-deactivate lvcreate-thinpool lvextend-thinpool lvremove-thinpool pvchange pvcreate pvmove pvremove vgcreate vgextend vgreduce vgremove wipefs write-lvmd-config",
  );
  const digest = createHash("sha256").update(JSON.stringify(plans)).digest("hex");
  expect(digest).toBe("f4cb2a7054ad107a5ffbeb917fa05f4b76d80d9d762efc9992d3918d06e81497");
});
