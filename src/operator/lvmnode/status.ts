import { TEMPLATE_GENERATION_ANNOTATION, type LVMNodeStatus, type NodeConditionType } from "../../api";
import type { NodeFinding } from "./finding";
import { setCondition, type DesiredCondition } from "../conditions";
import { approvalStatus, awaitingMessage } from "./approval-status";
import { readyCondition } from "../ready";
import { thinPoolCondition } from "./capacity";
import type { LVMNodeObject } from "../types";

/** The operator's own condition on each LVMNode: did the last reconcile get the node to its spec. */
export const RECONCILED: NodeConditionType = "Reconciled";

type State = NonNullable<LVMNodeStatus["state"]>;

/** What Ready summarises on an LVMNode, the operator's own judgement first. */
const READY_ORDER: readonly NodeConditionType[] = [
  "Reconciled",
  "VolumeGroupsHealthy",
  "DeviceClassesHealthy",
  "ProviderReady",
];
const READY_MESSAGE = "the node matches its spec; its volume groups and device classes are healthy";

/**
 * The LVMNode's status after a reconcile (pure): what the agent reported (state, volume groups
 * with included and excluded devices, thin pools, device classes, its conditions) when it
 * answered, else what was last reported; and the Reconciled condition. Every condition carries
 * the LVMNode's generation and keeps its lastTransitionTime unless its status changes (the agent's
 * own transition times are not used: they restart with each operation). Other conditions are kept.
 * Ready (ready.ts) summarises them all and the state, for kstatus.
 */
export function lvmNodeStatus(node: LVMNodeObject, finding: NodeFinding, now: number): LVMNodeStatus {
  const generation = node.metadata.generation ?? 0;
  const previous = node.status ?? {};
  const agent = "status" in finding ? finding.status : undefined;
  let conditions = previous.conditions ?? [];
  for (const c of agent?.conditions ?? []) {
    const { type, status, reason, message } = c;
    conditions = setCondition(
      conditions,
      {
        type,
        status,
        ...(reason ? { reason } : {}),
        ...(message ? { message } : {}),
        observedGeneration: generation,
      },
      now,
    );
  }
  conditions = setCondition(conditions, { ...reconciled(finding), observedGeneration: generation }, now);
  const pools = agent && thinPoolCondition(agent.volumeGroups, node.spec.capacity);
  if (pools) conditions = setCondition(conditions, { ...pools, observedGeneration: generation }, now);
  const approval = approvalStatus(previous, finding, now);
  if (approval.condition)
    conditions = setCondition(conditions, { ...approval.condition, observedGeneration: generation }, now);
  const state = stateOf(finding, previous.state, agent?.state);
  conditions = setCondition(
    conditions,
    readyCondition({ conditions, order: READY_ORDER, state, generation, okMessage: READY_MESSAGE }),
    now,
  );
  const volumeGroups = agent?.volumeGroups ?? previous.volumeGroups;
  const deviceClasses = agent?.deviceClasses ?? previous.deviceClasses;
  const applied = appliedTemplateGeneration(node, finding);
  return {
    state,
    observedGeneration: generation,
    ...(volumeGroups ? { volumeGroups } : {}),
    ...(deviceClasses ? { deviceClasses } : {}),
    ...(applied !== undefined ? { appliedTemplateGeneration: applied } : {}),
    ...(approval.pendingApproval ? { pendingApproval: approval.pendingApproval } : {}),
    ...(approval.lastApproval ? { lastApproval: approval.lastApproval } : {}),
    conditions,
  };
}

/**
 * The template generation of its set (the annotation its set writes with the spec) that the node
 * has applied: the one its spec carries once the agent synced it, else the one recorded before.
 */
function appliedTemplateGeneration(node: LVMNodeObject, finding: NodeFinding): number | undefined {
  const given = Number(node.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION] ?? NaN);
  if (finding.kind === "synced" && Number.isInteger(given) && given >= 0) return given;
  return node.status?.appliedTemplateGeneration;
}

function stateOf(finding: NodeFinding, previous: State | undefined, agent: State | undefined): State {
  switch (finding.kind) {
    case "invalid":
      return "Failed";
    case "notDriven":
      if (finding.reason === "NotManaged") return "Failed";
      // Deselected (in its grace period): its disks are as they were last reported.
      return finding.reason === "NotSelected" ? (previous ?? "Pending") : "Pending";
    case "busy":
      return "Progressing";
    case "teardown":
      return "Terminating";
    case "synced":
    case "blocked":
    case "awaiting":
      return agent ?? "Pending";
    case "failed":
      return agent ?? "Failed";
    case "unavailable":
      // What the disks hold was last seen by the agent; that it cannot be kept true now is Degraded.
      return previous && previous !== "Pending" ? "Degraded" : "Pending";
  }
}

function reconciled(finding: NodeFinding): DesiredCondition {
  const type = RECONCILED;
  switch (finding.kind) {
    case "invalid":
      return {
        type,
        status: "False",
        reason: "InvalidSpec",
        message: `the spec is invalid; nothing was sent to the agent: ${finding.problems.join("; ")}`,
      };
    case "synced":
      return finding.applied > 0
        ? {
            type,
            status: "True",
            reason: "Applied",
            message: `agent pod ${finding.pod} applied ${finding.applied} step(s); the node matches the spec`,
          }
        : {
            type,
            status: "True",
            reason: "InSync",
            message: `agent pod ${finding.pod}: the node matches the spec`,
          };
    case "awaiting":
      return { type, status: "False", reason: "AwaitingApproval", message: awaitingMessage(finding) };
    case "blocked":
      return {
        type,
        status: "False",
        reason: "PlanBlocked",
        message: `agent pod ${finding.pod}: nothing applied, the plan is blocked: ${finding.blocked.join("; ")}`,
      };
    case "unavailable":
      return { type, status: "False", reason: "AgentUnavailable", message: finding.message };
    case "notDriven":
      return { type, status: "False", reason: finding.reason, message: finding.message };
    case "busy":
      return {
        type,
        status: "Unknown",
        reason: "AgentBusy",
        message: `the agent is busy with another operation; retrying: ${finding.message}`,
      };
    case "failed":
      return { type, status: "False", reason: "AgentFailed", message: finding.message };
    case "teardown": {
      const o = finding.outcome;
      const reason =
        o.kind === "refused"
          ? "TeardownRefused"
          : o.kind === "unavailable"
            ? "AgentUnavailable"
            : "TeardownFailed";
      return { type, status: "False", reason, message: `deletionPolicy Delete: ${o.message}` };
    }
  }
}
