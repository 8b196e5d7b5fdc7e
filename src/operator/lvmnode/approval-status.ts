import { APPROVE_ANNOTATION, type ApprovalRecord, type LVMNodeStatus, type PendingApproval } from "../../api";
import { describeWaiting } from "../agents/pending";
import { rfc3339, type DesiredCondition } from "../conditions";
import type { NodeFinding } from "./finding";

/** The condition that says a plan waits for a person (docs/operator.md, Reviewed changes). */
export const AWAITING_APPROVAL = "AwaitingApproval";

/**
 * The approval part of an LVMNode's status after a reconcile (pure): the plan waiting, kept with
 * the time it started waiting while its hash stays the same; the last approval used; and the
 * AwaitingApproval condition (set once a plan has waited; False again when none does). What the
 * reconcile could not find out (agent unavailable, busy, failed) keeps what was there.
 */
export function approvalStatus(
  previous: LVMNodeStatus,
  finding: NodeFinding,
  now: number,
): {
  pendingApproval?: PendingApproval;
  lastApproval?: ApprovalRecord;
  condition?: Omit<DesiredCondition, "observedGeneration">;
} {
  const lastApproval =
    finding.kind === "synced" && finding.approved
      ? { hash: finding.approved, at: rfc3339(now) }
      : previous.lastApproval;
  const last = lastApproval ? { lastApproval } : {};
  if (finding.kind === "awaiting") {
    const w = finding.waiting;
    const since = previous.pendingApproval?.hash === w.hash ? previous.pendingApproval.since : rfc3339(now);
    return {
      ...last,
      pendingApproval: {
        hash: w.hash,
        policy: w.policy,
        since,
        steps: [...w.steps],
        ...(w.claims.length ? { claims: [...w.claims] } : {}),
      },
      condition: {
        type: AWAITING_APPROVAL,
        status: "True",
        reason: finding.stale ? "StaleApproval" : "ApprovalRequired",
        message: awaitingMessage(finding),
      },
    };
  }
  const unknown = finding.kind === "unavailable" || finding.kind === "busy" || finding.kind === "failed";
  if (unknown && previous.pendingApproval) return { ...last, pendingApproval: previous.pendingApproval };
  const had = previous.conditions?.some((c) => c.type === AWAITING_APPROVAL);
  if (!had || unknown) return last;
  return {
    ...last,
    condition: {
      type: AWAITING_APPROVAL,
      status: "False",
      reason: finding.kind === "synced" && finding.approved ? "Approved" : "NothingPending",
      message:
        finding.kind === "synced" && finding.approved
          ? `plan ${finding.approved} was approved and applied`
          : "no plan waits for an approval",
    },
  };
}

/** The message of a waiting plan; a stale approval is refused, naming the plan that waits now. */
export function awaitingMessage(finding: Extract<NodeFinding, { kind: "awaiting" }>): string {
  const w = finding.waiting;
  const stale = finding.stale
    ? `the approval ${APPROVE_ANNOTATION}=${finding.stale} is refused: it names another plan; the plan now is ${w.hash}. `
    : "";
  return `${stale}${describeWaiting(w)}; approve it: pulumi-lvm approve --node ${w.node} --hash ${w.hash}`;
}
