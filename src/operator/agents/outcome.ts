import type { LVMNodeStatus } from "../../api";
import type { NodePlanResponse } from "../../agent-client/agent-client";
import type { WaitingPlan } from "./pending";

/**
 * What driving a node's agent found, for the LVMNode's status and the queue. Every message names
 * the node, the agent pod and, for an answer, the HTTP status and the agent's own message.
 */
export type SyncOutcome =
  /** The node matches the spec (`applied` steps were done now, 0 when it already did). */
  | {
      readonly kind: "synced";
      readonly pod: string;
      readonly applied: number;
      readonly status: LVMNodeStatus;
      /** The approval (a plan hash) this apply used: recorded, never used again. */
      readonly approved?: string;
    }
  /** The plan waits for a person's approval (pending.ts): nothing was applied. */
  | {
      readonly kind: "awaiting";
      readonly pod: string;
      readonly waiting: WaitingPlan;
      /** An approval that was given, for another plan: refused. */
      readonly stale?: string;
      readonly status: LVMNodeStatus;
    }
  /** The plan has blocked items: nothing was applied; `blocked` says why, one sentence each. */
  | {
      readonly kind: "blocked";
      readonly pod: string;
      readonly blocked: readonly string[];
      readonly status: LVMNodeStatus;
    }
  /** 409 PlanChanged or OperationInProgress: nothing written, try again soon. */
  | { readonly kind: "busy"; readonly message: string }
  /** No Running and Ready agent pod, or the pod did not answer. */
  | { readonly kind: "unavailable"; readonly message: string }
  /** The agent answered with an error; its status when it could still report one. */
  | { readonly kind: "failed"; readonly message: string; readonly status?: LVMNodeStatus }
  /** The operator is stopping: a plan or status call was aborted, or an apply was not started. */
  | Stopped;

export type TeardownOutcome =
  | { readonly kind: "tornDown"; readonly pod: string }
  /** 409 VolumeGroupInUse: logical volumes other than our thin pools are in the way ("vg/lv"). */
  | { readonly kind: "refused"; readonly volumes: readonly string[]; readonly message: string }
  | { readonly kind: "busy"; readonly message: string }
  | { readonly kind: "unavailable"; readonly message: string }
  | { readonly kind: "failed"; readonly message: string }
  /** The operator is stopping: the teardown was not started. */
  | Stopped;

/** Nothing was changed on the node and nothing is to be written: the operator is stopping. */
export interface Stopped {
  readonly kind: "stopped";
  readonly message: string;
}

/** What to do with a plan: nothing (converged), apply it, or leave it (blocked items: a person decides). */
export type PlanDecision = "converged" | "apply" | "blocked";

/** Pure: blocked wins over steps (never apply half of what the person would have to review). */
export function decide(plan: Pick<NodePlanResponse, "actions" | "blocked">): PlanDecision {
  if (plan.blocked.length > 0) return "blocked";
  return plan.actions.length > 0 ? "apply" : "converged";
}

/** "vg1: /dev/sdc: has a filesystem signature", one line per blocked item. */
export function describeBlocked(blocked: NodePlanResponse["blocked"]): string[] {
  return blocked.map((b) => [b.volumeGroup, b.device, b.reason].filter(Boolean).join(": "));
}
