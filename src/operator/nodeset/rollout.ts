/**
 * Which of a set's nodes get a new template now (pure): a staged rollout, as a DaemonSet's
 * RollingUpdate, but done means "the node's agent applied it and the LVMNode is Ready".
 *
 * A node is `current` when its LVMNode's spec is the set's template of this template generation.
 * A current node is done once its LVMNode is Ready at its own generation; it has failed when its
 * last reconcile of that generation could not apply it (the agent failed, the plan is blocked, the
 * spec is invalid). Current nodes neither done nor failed are in flight.
 *
 * - Nodes not yet current are admitted in node name order, while fewer than maxConcurrent are in
 *   flight (a percentage of all the nodes given, rounded up).
 * - With pauseOnFailure, a failed node stops all admissions (paused) until it is skipped (a resume)
 *   or a new template generation starts over. A skipped failure, or any failure without
 *   pauseOnFailure, is finished: it holds no place among the in-flight ones.
 */
export interface RolloutNode {
  readonly name: string;
  /** Its LVMNode's spec carries this template generation. */
  readonly current: boolean;
  /** Its LVMNode is Ready at its current generation. */
  readonly ready: boolean;
  /** Why its agent could not apply its current spec, when that is the last news. */
  readonly failure?: string;
}

export interface RolloutPolicyInput {
  /** Already resolved against the number of nodes (maxConcurrentOf). */
  readonly maxConcurrent: number;
  readonly pauseOnFailure: boolean;
}

export interface RolloutDecision {
  /** Nodes to give the template now, in name order. */
  readonly admit: readonly string[];
  /** Failed nodes that stop the rollout (empty: not paused), in name order. */
  readonly pausedBy: readonly { readonly node: string; readonly message: string }[];
  /** Current nodes that are done. */
  readonly updated: number;
  /** Current nodes in flight (not done, not a finished failure), in name order. */
  readonly updating: readonly string[];
}

export function planRollout(
  nodes: readonly RolloutNode[],
  policy: RolloutPolicyInput,
  skipped: ReadonlySet<string> = new Set(),
): RolloutDecision {
  const sorted = [...nodes].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const current = sorted.filter((n) => n.current);
  const done = current.filter((n) => n.ready);
  const failed = current.filter((n) => !n.ready && n.failure !== undefined && !skipped.has(n.name));
  const finished = (n: RolloutNode) =>
    n.ready || (n.failure !== undefined && (skipped.has(n.name) || !policy.pauseOnFailure));
  const updating = current.filter((n) => !finished(n)).map((n) => n.name);
  const pausedBy = policy.pauseOnFailure ? failed.map((n) => ({ node: n.name, message: n.failure! })) : [];
  const room = pausedBy.length ? 0 : Math.max(0, policy.maxConcurrent - updating.length);
  const admit = sorted
    .filter((n) => !n.current)
    .slice(0, room)
    .map((n) => n.name);
  return { admit, pausedBy, updated: done.length, updating };
}
