import { z } from "zod";
import { InventoryParseError } from "../inventory/parse";
import type { RawNodeInventory } from "../inventory/types";
import type { PlanOptions } from "./plan-node";
import type { LvmdConfig } from "./types";

/**
 * The PlanOptions a recorded inventory carries (`pulumi-lvm inventory --agent-state-dir`): the node's
 * lvmd.yaml as its agent would read it, where it goes, and the orphan PVs the agent's journal shows it
 * created. With them, planning the recorded inventory gives the agent's own plan and hash; without
 * them (an inventory recorded without the flag) the options are empty, as `pulumi-lvm plan` always
 * did. A field of the wrong kind is an InventoryParseError naming the node and the field.
 */
export function recordedPlanOptions(raw: RawNodeInventory): PlanOptions {
  if (raw.agentPlanOptions === undefined) return {};
  const r = schema.safeParse(raw.agentPlanOptions);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    throw new InventoryParseError(
      raw.name,
      ["agentPlanOptions", ...issue.path.map(String)].join("."),
      issue.message,
    );
  }
  return {
    lvmdConfigPath: r.data.lvmdConfigPath,
    currentLvmdConfig: r.data.currentLvmdConfig as LvmdConfig | null,
    adoptOrphanPvs: r.data.adoptOrphanPvs,
  };
}

/** The agent reads lvmd.yaml as null or an object with a "device-classes" list (readLvmdConfig). */
const schema = z.strictObject({
  lvmdConfigPath: z.string().regex(/^\//, "must be an absolute path"),
  currentLvmdConfig: z.union([z.null(), z.looseObject({ "device-classes": z.array(z.unknown()) })]),
  adoptOrphanPvs: z.array(z.string().min(1)),
});
