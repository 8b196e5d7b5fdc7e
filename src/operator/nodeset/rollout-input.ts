import { maxConcurrentOf, rolloutPolicyOf, ROLLOUT_RESUME_ANNOTATION, type RolloutStatus } from "../../api";
import { jsonEqual } from "../../kube/json-equal";
import { sha256Canonical } from "../../planner/hash";
import type { LVMNodeObject, LVMNodeSetObject } from "../types";
import { desiredSpec } from "./desired";
import type { Action } from "./plan";
import { planRollout, type RolloutDecision, type RolloutNode } from "./rollout";

/** Reconciled reasons that say the agent could not apply the LVMNode's spec (lvmnode/status.ts). */
const FAILED = new Set(["AgentFailed", "PlanBlocked", "InvalidSpec"]);

/**
 * The set's template generation: its metadata.generation when its template last changed, known by
 * the template's digest kept in status.rollout (a change of the selector or the rollout policy is
 * not a new template).
 */
export function templateGenerationOf(set: LVMNodeSetObject): { generation: number; hash: string } {
  const hash = sha256Canonical(set.spec.template);
  const was = set.status?.rollout;
  return was?.templateHash === hash && was.templateGeneration !== undefined
    ? { generation: was.templateGeneration, hash }
    : { generation: set.metadata.generation ?? 0, hash };
}

/** What an LVMNode says for the rollout: does it carry the template, is it Ready, did it fail to apply it. */
export function rolloutNode(set: LVMNodeSetObject, o: LVMNodeObject): RolloutNode {
  const generation = o.metadata.generation ?? 0;
  const at = (type: string) =>
    o.status?.conditions?.find((c) => c.type === type && c.observedGeneration === generation);
  const ready = at("Ready")?.status === "True";
  const reconciled = at("Reconciled");
  const failed = !ready && reconciled?.status === "False" && FAILED.has(reconciled.reason ?? "");
  return {
    name: o.metadata.name,
    current: jsonEqual(o.spec, desiredSpec(set)),
    ready,
    ...(failed ? { failure: reconciled?.message ?? reconciled?.reason ?? "apply failed" } : {}),
  };
}

export interface Rollout {
  readonly decision: RolloutDecision;
  /** status.rollout to write. */
  readonly status: RolloutStatus;
  /** Nodes whose failure this reconcile passed over (a resume, or the set changed). */
  readonly resumed: readonly string[];
}

/**
 * The rollout of the set's template over its own LVMNodes (`own`, by node name, selected nodes
 * only): which nodes get it now, and the status to record. A paused rollout resumes once, passing
 * over the failures it stopped at, when the resume annotation has a value not acted on yet or the
 * set changed since it paused; a new template starts over.
 */
export function rolloutOf(
  set: LVMNodeSetObject,
  own: ReadonlyMap<string, LVMNodeObject>,
  total: number,
): Rollout {
  const { generation, hash } = templateGenerationOf(set);
  const was = set.status?.rollout;
  const sameTemplate = was?.templateGeneration === generation;
  const nodes = [...own.values()]
    .filter((o) => !o.metadata.deletionTimestamp)
    .map((o) => rolloutNode(set, o));
  const policy = rolloutPolicyOf(set.spec.rollout);
  const input = {
    maxConcurrent: maxConcurrentOf(policy.maxConcurrent, total),
    pauseOnFailure: policy.pauseOnFailure,
  };
  let skipped = new Set(sameTemplate ? (was?.skipped ?? []) : []);
  const annotation = set.metadata.annotations?.[ROLLOUT_RESUME_ANNOTATION];
  const resumeAsked = annotation !== undefined && annotation !== was?.resumed;
  // The set changed since the pause was recorded (not merely since the last status write: a
  // status write can lag behind a spec change, and a failure in that window would pass unseen).
  const pause = set.status?.conditions?.find((c) => c.type === "RolloutPaused" && c.status === "True");
  const changed = pause !== undefined && pause.observedGeneration !== set.metadata.generation;
  let decision = planRollout(nodes, input, skipped);
  const resumed: string[] = [];
  if (decision.pausedBy.length && (resumeAsked || changed)) {
    for (const p of decision.pausedBy) resumed.push(p.node);
    skipped = new Set([...skipped, ...resumed]);
    decision = planRollout(nodes, input, skipped);
  }
  // Skipped nodes that recovered (or left) need no place in the list.
  const failing = new Set(nodes.filter((n) => n.failure !== undefined).map((n) => n.name));
  const stillSkipped = [...skipped].filter((n) => failing.has(n)).sort();
  return {
    decision,
    resumed,
    status: {
      templateGeneration: generation,
      templateHash: hash,
      updatedNodes: decision.updated,
      totalNodes: total,
      ...(decision.updating.length ? { updating: decision.updating.slice(0, 100) } : {}),
      ...(annotation !== undefined ? { resumed: annotation } : {}),
      ...(stillSkipped.length ? { skipped: stillSkipped.slice(0, 100) } : {}),
    },
  };
}

/** The plan's actions without the spec updates of nodes the rollout does not admit now. */
export function admitted(actions: readonly Action[], decision: RolloutDecision): Action[] {
  const admit = new Set(decision.admit);
  return actions.filter((a) => a.kind !== "update" || !a.specChange || admit.has(a.node));
}
