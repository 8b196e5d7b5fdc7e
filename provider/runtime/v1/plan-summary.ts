import { z } from "zod";
import type { NodePlan } from "../../../src/planner/types";
import type { NodePlanResponse } from "../../../src/agent-client/agent-client";

/**
 * A node's plan as people review it in `pulumi preview`: what happens to which device, what is left
 * out and why. It is stored in the resource's inputs, so the preview diff shows it line by line,
 * and its hash is what `pulumi up` approves when it applies.
 */
export interface PlanSummary {
  /** The plan's hash; apply sends it back and the agent refuses (409) if the node has changed. */
  readonly hash: string;
  readonly selected: boolean;
  /** How many steps the plan has; 0 means the node is converged. */
  readonly steps: number;
  /** Devices that start a new volume group: "/dev/vdb → vg-data (new volume group)". */
  readonly claimed: string[];
  /** Devices added to an existing volume group: "/dev/vdc → vg-data". */
  readonly extended: string[];
  /** Members the selector no longer picks, moved off and removed: "/dev/vdd ← vg-data". */
  readonly removed: string[];
  /** Signatures erased first (only with forceWipeDevicesAndDestroyAllData): "/dev/vde: xfs, gpt". */
  readonly wiped: string[];
  /** "/dev/sda1: /dev/sda1 is mounted at /boot" */
  readonly excluded: string[];
  /** What the planner will not do, and why; a node with blocked entries is not converged. */
  readonly blocked: string[];
  /** Every step in order, with why: "vgcreate vg-data: create volume group vg-data on ...". */
  readonly actions: string[];
}

const claimSchema = z.looseObject({
  kname: z.string(),
  member: z.boolean(),
  wipe: z.array(z.string()).optional(),
});
const volumeGroupPlanSchema = z.looseObject({
  name: z.string(),
  exists: z.boolean().optional(),
  claimed: z.array(claimSchema),
  leaving: z.array(claimSchema).optional(),
  excluded: z.array(
    z.looseObject({ kname: z.string(), path: z.string().optional(), reasons: z.array(z.string()) }),
  ),
});

/** Summarizes a node plan (src/planner/types.ts NodePlan, as the agent sends it); pure. */
export function summarizePlan(plan: NodePlanResponse | NodePlan): PlanSummary {
  const groups = plan.volumeGroups.map((vg) => volumeGroupPlanSchema.parse(vg));
  const created = new Set(plan.actions.filter((a) => a.op === "vgcreate").map((a) => a.volumeGroup));
  const claimed: string[] = [];
  const extended: string[] = [];
  const removed: string[] = [];
  const wiped: string[] = [];
  for (const vg of groups) {
    const isNew = vg.exists === false || created.has(vg.name);
    for (const c of vg.claimed) {
      if (c.wipe?.length) wiped.push(`${c.kname}: ${c.wipe.join(", ")}`);
      if (c.member) continue;
      if (isNew) claimed.push(`${c.kname} → ${vg.name} (new volume group)`);
      else extended.push(`${c.kname} → ${vg.name}`);
    }
    for (const c of vg.leaving ?? []) removed.push(`${c.kname} ← ${vg.name}`);
  }
  return {
    hash: plan.hash,
    selected: plan.selected,
    steps: plan.actions.length,
    claimed,
    extended,
    removed,
    wiped,
    excluded: unique(
      groups.flatMap((vg) => vg.excluded.map((e) => `${e.path ?? e.kname}: ${e.reasons.join("; ")}`)),
    ),
    blocked: plan.blocked.map((b) => [b.volumeGroup, b.device, b.reason].filter(Boolean).join(": ")),
    actions: plan.actions.map(
      (a) => `${[a.op, a.device ?? a.volumeGroup].filter(Boolean).join(" ")}: ${a.reason}`,
    ),
  };
}

function unique(items: string[]): string[] {
  return [...new Set(items)];
}
