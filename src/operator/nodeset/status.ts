import { ROLLOUT_RESUME_ANNOTATION, type LVMNodeSetStatus, type RolloutStatus } from "../../api";
import { setCondition, type DesiredCondition } from "../conditions";
import { READY, readyCondition } from "../ready";
import type { Conflict } from "./plan";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";

type NodeEntry = NonNullable<LVMNodeSetStatus["nodes"]>[number];
type State = NonNullable<LVMNodeSetStatus["state"]>;

/** What a reconcile found, for the set's status. */
export type StatusInput =
  | {
      readonly kind: "active";
      readonly selected: readonly string[];
      readonly conflicts: readonly Conflict[];
      /** Nodes whose LVMNode could not be written in this reconcile, with the API's error. */
      readonly failures: readonly Conflict[];
      /** The set's own LVMNodes by node name, after this reconcile's writes. */
      readonly lvmNodes: ReadonlyMap<string, LVMNodeObject>;
      /** ProviderReady (provider.ts), when the operator checks it (--provider-ready); absent: left as it is. */
      readonly provider?: DesiredCondition;
      /** The rollout of the template (rollout-input.ts): its summary, and the failed nodes that pause it. */
      readonly rollout?: {
        readonly status: RolloutStatus;
        readonly pausedBy: readonly Conflict[];
      };
    }
  /** The spec breaks rules the API server does not check; nothing was done. */
  | { readonly kind: "invalid"; readonly problems: readonly string[] }
  /** The set is being deleted; these LVMNodes of it remain. */
  | { readonly kind: "terminating"; readonly remaining: readonly string[] };

/**
 * At most this many nodes are listed in `status.nodes`: the status of a set over 5,000 nodes must
 * stay far below etcd's 1.5 MiB object limit. Per-node detail lives in each LVMNode.
 */
export const LISTED_NODES = 100;

/**
 * The set's status: an entry per selected node that is not Ready (its LVMNode's state, or Failed
 * with the reason; at most LISTED_NODES, the condition's message counts them all),
 * the counts of selected nodes by state, the LVMNodesReady condition (KEP-1623, with
 * observedGeneration), Ready (ready.ts: the summary kstatus reads) and a summary state. Condition
 * types this operator does not own (ProviderReady) are kept as they are, and judged by Ready.
 */
export function nodeSetStatus(set: LVMNodeSetObject, input: StatusInput, now: number): LVMNodeSetStatus {
  const { state, nodes, condition } = summarize(set, input);
  const generation = set.metadata.generation ?? 0;
  const withNodes = setCondition(
    set.status?.conditions,
    { ...condition, observedGeneration: generation },
    now,
  );
  const withProvider =
    input.kind === "active" && input.provider
      ? setCondition(withNodes, { ...input.provider, observedGeneration: generation }, now)
      : withNodes;
  const paused = input.kind === "active" ? rolloutPaused(set, input.rollout) : undefined;
  const conditions = paused
    ? setCondition(withProvider, { ...paused, observedGeneration: generation }, now)
    : withProvider;
  const rollout =
    input.kind === "active" ? (input.rollout?.status ?? set.status?.rollout) : set.status?.rollout;
  return {
    state,
    observedGeneration: generation,
    ...counts(set, input, nodes),
    ...(rollout ? { rollout } : {}),
    // Ready nodes are counted, not listed: 200 Ready nodes made 53 KB of status.
    nodes: nodes.filter((n) => n.state !== "Ready").slice(0, LISTED_NODES),
    conditions: setCondition(
      conditions,
      readyCondition({ conditions, order: READY_ORDER, generation, okMessage: condition.message ?? "" }),
      now,
    ),
  };
}

/** Condition on a set whose rollout stopped at a failed node. */
export const ROLLOUT_PAUSED = "RolloutPaused";

/**
 * RolloutPaused: True naming each failed node and its error while the rollout waits; False once it
 * goes on (written only when it was there before: a set that never paused does not carry it).
 */
function rolloutPaused(
  set: LVMNodeSetObject,
  rollout: { status: RolloutStatus; pausedBy: readonly Conflict[] } | undefined,
): DesiredCondition | undefined {
  if (!rollout) return undefined;
  const generation = rollout.status.templateGeneration ?? 0;
  if (rollout.pausedBy.length)
    return {
      type: ROLLOUT_PAUSED,
      status: "True",
      reason: "NodeFailed",
      message: `the rollout of template generation ${generation} is paused: ${rollout.pausedBy.map((p) => `node ${p.node} failed to apply it: ${p.message}`).join("; ")}. It resumes when the set changes, or when annotation ${ROLLOUT_RESUME_ANNOTATION} is given a new value (pulumi-lvm rollout resume)`,
    };
  if (!set.status?.conditions?.some((c) => c.type === ROLLOUT_PAUSED)) return undefined;
  return {
    type: ROLLOUT_PAUSED,
    status: "False",
    reason: "Resumed",
    message: `the rollout of template generation ${generation} goes on: ${rollout.status.updatedNodes ?? 0} of ${rollout.status.totalNodes ?? 0} nodes updated`,
  };
}

/** What Ready summarises on a set: its nodes, then the provider (when someone reports it). */
const READY_ORDER = ["LVMNodesReady", "ProviderReady"] as const;

type Counts = Pick<LVMNodeSetStatus, "desiredNodes" | "readyNodes" | "degradedNodes" | "failedNodes">;

/**
 * The counts for `kubectl get` (DESIRED READY FAILED) and dashboards: of the selected nodes. An
 * invalid spec changed nothing, so the last counts stay; a set being deleted desires none.
 */
function counts(set: LVMNodeSetObject, input: StatusInput, nodes: readonly NodeEntry[]): Counts {
  if (input.kind === "invalid") {
    const { desiredNodes, readyNodes, degradedNodes, failedNodes } = set.status ?? {};
    return {
      desiredNodes: desiredNodes ?? 0,
      readyNodes: readyNodes ?? 0,
      degradedNodes: degradedNodes ?? 0,
      failedNodes: failedNodes ?? 0,
    };
  }
  const count = (state: State) =>
    input.kind === "active" ? nodes.filter((n) => n.state === state).length : 0;
  return {
    desiredNodes: input.kind === "active" ? nodes.length : 0,
    readyNodes: count("Ready"),
    degradedNodes: count("Degraded"),
    failedNodes: count("Failed"),
  };
}

function summarize(
  set: LVMNodeSetObject,
  input: StatusInput,
): { state: State; nodes: NodeEntry[]; condition: DesiredCondition } {
  const type = "LVMNodesReady";
  if (input.kind === "invalid")
    return {
      state: "Failed",
      nodes: set.status?.nodes ?? [],
      condition: {
        type,
        status: "False",
        reason: "InvalidSpec",
        message: `the spec is invalid; no LVMNode was changed: ${input.problems.join("; ")}`,
      },
    };
  if (input.kind === "terminating")
    return {
      state: "Terminating",
      nodes: input.remaining.map((name) => ({ name, state: "Terminating", message: "being deleted" })),
      condition: {
        type,
        status: "False",
        reason: "Terminating",
        message: input.remaining.length
          ? `waiting for ${input.remaining.length} LVMNode(s) to be deleted: ${names(input.remaining)}`
          : "every LVMNode is deleted",
      },
    };

  const problems = new Map<string, string>();
  for (const f of [...input.failures, ...input.conflicts]) problems.set(f.node, f.message);
  const nodes = input.selected.map((name): NodeEntry => {
    const problem = problems.get(name);
    if (problem) return { name, state: "Failed", message: problem };
    const o = input.lvmNodes.get(name);
    if (o?.metadata.deletionTimestamp)
      return { name, state: "Terminating", message: "the previous LVMNode is being deleted" };
    const state = o?.status?.state ?? "Pending";
    return state === "Ready" ? { name, state } : { name, state, message: notReadyMessage(o) };
  });
  const condition: DesiredCondition =
    input.conflicts.length > 0
      ? {
          type,
          status: "False",
          reason: "NodeSetOverlap",
          message: input.conflicts.map((c) => c.message).join("; "),
        }
      : input.failures.length > 0
        ? {
            type,
            status: "False",
            reason: "ApplyFailed",
            message: input.failures.map((f) => `${f.node}: ${f.message}`).join("; "),
          }
        : nodes.length === 0
          ? { type, status: "False", reason: "NoNodesSelected", message: "the nodeSelector selects no node" }
          : readiness(nodes, input.lvmNodes);
  return { state: summaryState(nodes, problems.size > 0), nodes, condition };
}

/** LVMNodesReady when every selected node's LVMNode was written: how many are Ready, and who waits. */
function readiness(
  nodes: readonly NodeEntry[],
  lvmNodes: ReadonlyMap<string, LVMNodeObject>,
): DesiredCondition {
  const type = "LVMNodesReady";
  const notReady = nodes.filter((n) => n.state !== "Ready");
  const ready = `${nodes.length - notReady.length} of ${nodes.length} LVMNodes are Ready`;
  if (notReady.length === 0) return { type, status: "True", reason: "AllLVMNodesReady", message: ready };
  const notYet = `not yet: ${names(notReady.map((n) => `${n.name} (${n.state})`))}${notReady.length > LISTED_NODES ? ` (status.nodes lists the first ${LISTED_NODES})` : ""}`;
  // A node whose plan waits for a person is named with the plan's hash: what a `pulumi up` that
  // waited for this condition, or `kubectl wait`, prints when it gives up.
  const awaiting = notReady.flatMap((n) => {
    const hash = lvmNodes.get(n.name)?.status?.pendingApproval?.hash;
    return hash ? [`${n.name} (plan ${hash})`] : [];
  });
  return awaiting.length > 0
    ? {
        type,
        status: "False",
        reason: "AwaitingApproval",
        message: `${ready}; ${awaiting.length} wait for a person to approve their plan: ${names(awaiting)} (pulumi-lvm approve --node NODE --hash HASH, or a NodeSet's approvals); ${notYet}`,
      }
    : { type, status: "False", reason: "LVMNodesNotReady", message: `${ready}; ${notYet}` };
}

function summaryState(nodes: readonly NodeEntry[], problems: boolean): State {
  if (problems || nodes.some((n) => n.state === "Failed" || n.state === "Degraded")) return "Degraded";
  if (nodes.length === 0 || nodes.every((n) => n.state === "Pending")) return "Pending";
  return nodes.every((n) => n.state === "Ready") ? "Ready" : "Progressing";
}

function notReadyMessage(o: LVMNodeObject | undefined): string {
  if (!o?.status?.state) return "waiting for the node agent to report";
  const notTrue = (o.status.conditions ?? []).filter((c) => c.status !== "True");
  // Ready summarizes the others (its message is "<Type>: <message>" of one of them): only alone does it add a why.
  const others = notTrue.filter((c) => c.type !== READY);
  const failing = others.length ? others : notTrue;
  return failing.length
    ? failing.map((c) => `${c.type}: ${c.message ?? c.reason ?? c.status}`).join("; ")
    : `LVMNode is ${o.status.state}`;
}

/** At most 10 names, then how many more. */
function names(list: readonly string[]): string {
  return list.length <= 10 ? list.join(", ") : `${list.slice(0, 10).join(", ")} and ${list.length - 10} more`;
}
