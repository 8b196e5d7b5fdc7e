import type { LVMNodeStatus } from "../../api";
import type { EventInput } from "../events/recorder";
import { thinPoolEvents } from "./capacity";

type EventOf = Omit<EventInput, "regarding">;

/**
 * Reasons of the Reconciled condition that are worth an Event when the LVMNode turns to them
 * (Warning): a person has something to do. AgentFailed of an apply is its own ApplyFailed event;
 * AgentBusy (retried by itself) and the True reasons are not worth one.
 */
const WARN_ON = new Set([
  "PlanBlocked",
  "AwaitingApproval",
  "NodeSetOverlap",
  "NotManaged",
  "InvalidSpec",
  "AgentUnavailable",
  "AgentFailed",
  "TeardownRefused",
  "TeardownFailed",
]);

/**
 * The Events a status change of an LVMNode is worth (pure), from the status before and after a
 * write: the Reconciled condition turning to a Warning reason (or to another message of it), and
 * a thin pool's use crossing a capacity threshold (capacity.ts), and devices newly claimed or newly
 * excluded per volume group. The same status twice gives none, so
 * a resync that changes nothing records nothing. `applyFailed`: this reconcile's apply failed (it
 * has its own event; AgentFailed is then not repeated).
 */
export function statusEvents(
  before: LVMNodeStatus | undefined,
  after: LVMNodeStatus,
  applyFailed = false,
): EventOf[] {
  const out: EventOf[] = [];
  const was = before?.conditions?.find((c) => c.type === "Reconciled");
  const now = after.conditions?.find((c) => c.type === "Reconciled");
  if (
    now?.reason &&
    WARN_ON.has(now.reason) &&
    !(applyFailed && now.reason === "AgentFailed") &&
    (was?.reason !== now.reason || was?.message !== now.message)
  )
    out.push({ type: "Warning", reason: now.reason, action: "Reconcile", note: now.message ?? now.reason });
  out.push(...thinPoolEvents(before, after));

  const previous = new Map((before?.volumeGroups ?? []).map((vg) => [vg.name, vg]));
  for (const vg of after.volumeGroups ?? []) {
    const old = previous.get(vg.name);
    const had = new Set((old?.devices?.included ?? []).map((d) => d.id ?? d.kname));
    const claimed = (vg.devices?.included ?? []).filter((d) => !had.has(d.id ?? d.kname));
    if (claimed.length)
      out.push({
        type: "Normal",
        reason: "DevicesClaimed",
        action: "Claim",
        note: `volume group ${vg.name}: ${claimed.map((d) => `${d.kname}${d.id ? ` (${d.id})` : ""}`).join(", ")} now in it`,
      });
    const wasExcluded = new Set((old?.devices?.excluded ?? []).map((d) => d.kname));
    const excluded = (vg.devices?.excluded ?? []).filter((d) => !wasExcluded.has(d.kname));
    if (excluded.length)
      out.push({
        type: "Normal",
        reason: "DevicesExcluded",
        action: "Claim",
        note: `volume group ${vg.name}: left alone: ${excluded.map((d) => `${d.kname} (${d.reasons.join("; ")})`).join(", ")}`,
      });
  }
  return out;
}
