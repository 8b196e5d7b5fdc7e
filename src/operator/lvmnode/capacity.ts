import { capacityThresholds, type Capacity, type LVMNodeStatus, type NodeConditionType } from "../../api";
import type { DesiredCondition } from "../conditions";
import type { EventInput } from "../events/recorder";

/**
 * The LVMNode's ThinPoolNearlyFull condition (pure), from the thin pools' data and metadata use the
 * agent reports (status.volumeGroups[].volumes[]) and the spec's `capacity` thresholds: True, reason
 * AboveWarning or AboveCritical, naming each pool at or over the warning with both percentages; False,
 * BelowWarning. Not part of Ready: a filling pool is something to act on, not a node that is down.
 */
export const THIN_POOL_NEARLY_FULL: NodeConditionType = "ThinPoolNearlyFull";

export function thinPoolCondition(
  volumeGroups: LVMNodeStatus["volumeGroups"],
  capacity: Capacity | undefined,
): DesiredCondition | undefined {
  const { warningPercent: warn, criticalPercent: crit } = capacityThresholds(capacity);
  const pools = (volumeGroups ?? []).flatMap((vg) =>
    (vg.volumes ?? [])
      .filter((v) => v.dataPercent !== undefined || v.metadataPercent !== undefined)
      .map((v) => {
        const worst = Math.max(Number(v.dataPercent ?? 0), Number(v.metadataPercent ?? 0));
        return {
          text: `${vg.name}/${v.name} data ${v.dataPercent ?? "?"}% metadata ${v.metadataPercent ?? "?"}%`,
          level: worst >= crit ? "critical" : worst >= warn ? "warning" : undefined,
        };
      }),
  );
  if (pools.length === 0) return undefined;
  const full = pools.filter((p) => p.level);
  const type = THIN_POOL_NEARLY_FULL;
  if (full.length === 0)
    return {
      type,
      status: "False",
      reason: "BelowWarning",
      message: `every thin pool is below ${warn}% data and metadata`,
    };
  return {
    type,
    status: "True",
    reason: full.some((p) => p.level === "critical") ? "AboveCritical" : "AboveWarning",
    message: `${full.map((p) => `${p.text} (${p.level})`).join("; ")}; thresholds ${warn}% and ${crit}%`,
  };
}

/**
 * The Event a change of ThinPoolNearlyFull is worth: into warning (ThinPoolNearlyFull) or critical
 * (ThinPoolCriticallyFull), Warning; back below (ThinPoolSpaceRecovered), Normal. Usage that moves
 * within the same level records nothing.
 */
export function thinPoolEvents(
  before: LVMNodeStatus | undefined,
  after: LVMNodeStatus,
): Array<Omit<EventInput, "regarding">> {
  const was = before?.conditions?.find((c) => c.type === THIN_POOL_NEARLY_FULL);
  const now = after.conditions?.find((c) => c.type === THIN_POOL_NEARLY_FULL);
  if (!now || now.reason === (was?.reason ?? "BelowWarning")) return [];
  const note = now.message ?? now.reason ?? "";
  switch (now.reason) {
    case "AboveWarning":
      return [{ type: "Warning", reason: "ThinPoolNearlyFull", action: "Monitor", note }];
    case "AboveCritical":
      return [{ type: "Warning", reason: "ThinPoolCriticallyFull", action: "Monitor", note }];
    default:
      return [{ type: "Normal", reason: "ThinPoolSpaceRecovered", action: "Monitor", note }];
  }
}
