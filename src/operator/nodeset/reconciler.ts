import { jsonEqual } from "../../kube/json-equal";
import { mergePatch } from "../../kube/merge-patch";
import { checkLVMNodeSetSpec, type LVMNodeSetStatus } from "../../api";
import type { Clock } from "../../kube/clock";
import type { KubeClient } from "../../kube/client";
import { isConflict, KubeApiError } from "../../kube/errors";
import { LVM_NODES, LVM_NODE_SETS } from "../../kube/resources";
import { isControlledBy, NODESET_FINALIZER } from "../ownership";
import { planFinalize, planNodeSet, type Action, type Conflict } from "./plan";
import type { EventInput } from "../events/recorder";
import { nodeSetStatus, ROLLOUT_PAUSED, type StatusInput } from "./status";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";
import { desiredClassObjects, ensureClassObjects } from "./classes";
import { providerReady, readProviderFacts } from "./provider";
import { inSlowStartBatches } from "../../kube/slow-start";
import { admitted, rolloutOf, templateGenerationOf } from "./rollout-input";

/** How a reconcile ended, for metrics and logs. */
export type ReconcileResult = "not_found" | "in_sync" | "changed" | "error";

export interface NodeSetReconcilerOptions {
  readonly kube: KubeClient;
  /** Every Node (the node informer's cache). */
  readonly nodes: () => readonly NodeObject[];
  /** Every LVMNode the operator watches, in all namespaces it watches (the LVMNode informer's cache). */
  readonly lvmNodes: () => readonly LVMNodeObject[];
  readonly clock: Clock;
  /** One structured log entry (an action, a conflict, a failure). */
  readonly log: (entry: Record<string, unknown>) => void;
  /**
   * How long a node must stay out of the selector before its LVMNode is deleted (a label that
   * flickers must not start a teardown with deletionPolicy Delete). A Node that is gone: at once.
   * @default 60000
   */
  readonly deselectionGraceMs?: number;
  /** The least time between two status writes of one set; later ones wait. @default 2000 */
  readonly statusIntervalMs?: number;
  /** Reconcile `key` again after `ms` (the operator's queue). @default none: the resync does it */
  readonly requeue?: (key: string, ms: number) => void;
  /**
   * Records an Event (events/recorder.ts) when LVMNodesReady turns to NodeSetOverlap, ApplyFailed
   * or InvalidSpec (or to another message of it). @default none
   */
  readonly record?: (event: EventInput) => void;
  /**
   * Create the StorageClasses and VolumeSnapshotClasses of the set's device classes that do not
   * exist (classes.ts), unless the set says the Pulumi components make them. @default false
   */
  readonly classObjects?: boolean;
  /** Report ProviderReady (provider.ts: TopoLVM's CSIDriver and each selected node's CSINode). @default false */
  readonly providerReady?: boolean;
  /**
   * Create each LVMNode with this finalizer already on it: the one the LVMNode reconciler puts on
   * every LVMNode it drives (lvmnode/reconciler.ts), which would otherwise cost a GET and a PATCH
   * per node (and a watch event) right after the create. Only when the operator drives the agents:
   * nothing else would ever remove it. @default none
   */
  readonly lvmNodeFinalizer?: string;
}

/** LVMNodesReady reasons worth a Warning Event when the set turns to them: someone has to act. */
const WARN_ON = new Set(["NodeSetOverlap", "ApplyFailed", "InvalidSpec"]);

/** The cache was behind the API server (409 on a write): try again once the watch caught up. */
export class StaleCacheError extends Error {
  override readonly name = "StaleCacheError";
}

/**
 * Reconciles one LVMNodeSet, in the fixed order: get (from the API server, not the cache); ignore
 * not-found; ensure the finalizer, or finalize a set being deleted; act (create, update, delete its
 * LVMNodes); patch status, only when it changed. A reconcile with nothing to do writes nothing.
 * Throws when a write failed (after writing the failure into the status), so the queue retries.
 */
export class NodeSetReconciler {
  /** Set key -> LVMNode uid -> when its node was first seen deselected (in memory: a restart waits again). */
  private readonly deselected = new Map<string, Map<string, number>>();
  /** Set key -> the status this operator last wrote (a status changed by someone else is put right). */
  private readonly written = new Map<string, unknown>();

  /** The status this operator last wrote for the set `key`, if any. */
  lastStatus(key: string): unknown {
    return this.written.get(key);
  }

  /** Set key -> when its status was last written. */
  private readonly statusWritten = new Map<string, number>();

  constructor(private readonly o: NodeSetReconcilerOptions) {}

  async reconcile(key: string): Promise<ReconcileResult> {
    const [namespace, name] = splitKey(key);
    let set = await this.o.kube.get<LVMNodeSetObject>(LVM_NODE_SETS, namespace, name);
    if (!set) return "not_found";
    if (set.metadata.deletionTimestamp) return this.finalize(set);

    let wrote = false;
    if (!(set.metadata.finalizers ?? []).includes(NODESET_FINALIZER)) {
      set = await this.o.kube.patch<LVMNodeSetObject>(LVM_NODE_SETS, namespace, name, {
        metadata: {
          resourceVersion: set.metadata.resourceVersion,
          finalizers: [...(set.metadata.finalizers ?? []), NODESET_FINALIZER],
        },
      });
      wrote = true;
    }

    const checked = checkLVMNodeSetSpec(set.spec, ["spec"]);
    if (!checked.ok) {
      const problems = checked.problems.map((p) => `${p.path}: ${p.message}`);
      this.o.log({ msg: "invalid spec; nothing done", nodeSet: key, problems });
      return (await this.patchStatus(set, { kind: "invalid", problems })) || wrote ? "changed" : "in_sync";
    }

    const lvmNodes = this.o.lvmNodes();
    const plan = planNodeSet(set, this.o.nodes(), lvmNodes, templateGenerationOf(set).generation);
    const own = new Map(
      lvmNodes
        .filter((n) => n.metadata.namespace === namespace && isControlledBy(n, set))
        .map((n) => [n.metadata.name, n] as const),
    );
    const selectedSet = new Set(plan.selected);
    const rollout = rolloutOf(
      set,
      new Map([...own].filter(([node]) => selectedSet.has(node))),
      plan.selected.length,
    );
    if (rollout.resumed.length)
      this.o.log({ msg: "rollout resumed past failed nodes", nodeSet: key, nodes: rollout.resumed });
    const failures: Conflict[] = [];
    let stale: KubeApiError | undefined;
    const actions = this.graced(key, admitted(plan.actions, rollout.decision), selectedSet);
    // A new set of 500 nodes is 500 creates: in doubling batches, not one round trip after another.
    const results = await inSlowStartBatches(actions, (action) => this.act(set, action));
    actions.forEach((action, i) => {
      const r = results[i]!;
      if (r.status === "fulfilled") {
        wrote = true;
        if (r.value) own.set(action.node, r.value);
        else own.delete(action.node);
        return;
      }
      const e = r.reason as Error;
      if (isConflict(e)) stale = e as KubeApiError;
      else failures.push({ node: action.node, message: e.message });
      this.o.log({
        msg: "write failed",
        nodeSet: key,
        action: action.kind,
        node: action.node,
        error: e.message,
      });
    });
    if (stale) throw new StaleCacheError(`${key}: ${stale.message}; retrying once the cache caught up`);
    if (this.o.classObjects) {
      const classes = await ensureClassObjects(
        this.o.kube,
        desiredClassObjects(set, checked.value),
        this.o.log,
        key,
      );
      if (classes.created.length) wrote = true;
    }
    for (const c of plan.conflicts)
      this.o.log({ msg: "conflict: node not managed", nodeSet: key, node: c.node, reason: c.message });

    const input: StatusInput = {
      kind: "active",
      selected: plan.selected,
      conflicts: plan.conflicts,
      failures,
      lvmNodes: own,
      rollout: { status: rollout.status, pausedBy: rollout.decision.pausedBy },
      ...(this.o.providerReady
        ? { provider: providerReady(plan.selected, await readProviderFacts(this.o.kube)) }
        : {}),
    };
    if (await this.patchStatus(set, input)) wrote = true;
    if (failures.length)
      throw new Error(`${key}: ${failures.map((f) => `${f.node}: ${f.message}`).join("; ")}`);
    return wrote ? "changed" : "in_sync";
  }

  /**
   * The plan's actions without the deletes of LVMNodes whose node has been deselected for less
   * than the grace period (the set is reconciled again when it ends); a node selected again is
   * forgotten. A Node that no longer exists is not waited for.
   */
  private graced(key: string, actions: readonly Action[], selected: ReadonlySet<string>): Action[] {
    const grace = this.o.deselectionGraceMs ?? 60_000;
    const now = this.o.clock.now();
    const nodes = new Set(this.o.nodes().map((n) => n.metadata.name));
    const before = this.deselected.get(key) ?? new Map<string, number>();
    const waiting = new Map<string, number>();
    const kept = actions.filter((a) => {
      if (a.kind !== "delete" || selected.has(a.node) || !nodes.has(a.node) || grace <= 0) return true;
      const since = before.get(a.uid) ?? now;
      if (now - since >= grace) return true;
      waiting.set(a.uid, since);
      if (since === now)
        this.o.log({
          msg: "node deselected; its LVMNode is kept for the grace period",
          nodeSet: key,
          node: a.node,
          graceMs: grace,
        });
      this.o.requeue?.(key, since + grace - now);
      return false;
    });
    // Only what still waits is remembered: a node selected again starts over next time.
    if (waiting.size) this.deselected.set(key, waiting);
    else this.deselected.delete(key);
    return kept;
  }

  /** Deletes the set's LVMNodes, then removes the finalizer once none is left. */
  private async finalize(set: LVMNodeSetObject): Promise<ReconcileResult> {
    const { namespace = "", name } = set.metadata;
    if (!(set.metadata.finalizers ?? []).includes(NODESET_FINALIZER)) return "in_sync";
    const lvmNodes = this.o.lvmNodes();
    let wrote = false;
    const results = await inSlowStartBatches(planFinalize(set, lvmNodes), (action) => this.act(set, action));
    if (results.some((r) => r.status === "fulfilled")) wrote = true;
    const failed = results.find((r) => r.status === "rejected");
    if (failed) throw failed.reason;
    const remaining = lvmNodes
      .filter((n) => n.metadata.namespace === namespace && isControlledBy(n, set))
      .map((n) => n.metadata.name)
      .sort();
    if (remaining.length > 0) {
      // Their deletion events bring the set back here.
      return (await this.patchStatus(set, { kind: "terminating", remaining })) || wrote
        ? "changed"
        : "in_sync";
    }
    await this.o.kube.patch(LVM_NODE_SETS, namespace, name, {
      metadata: {
        resourceVersion: set.metadata.resourceVersion,
        finalizers: (set.metadata.finalizers ?? []).filter((f) => f !== NODESET_FINALIZER),
      },
    });
    this.o.log({ msg: "finalized", nodeSet: `${namespace}/${name}` });
    return "changed";
  }

  /** Performs one action; the LVMNode afterwards, or undefined once deleted. */
  private async act(set: LVMNodeSetObject, action: Action): Promise<LVMNodeObject | undefined> {
    const namespace = set.metadata.namespace ?? "";
    const where = { nodeSet: `${namespace}/${set.metadata.name}`, lvmNode: `${namespace}/${action.node}` };
    switch (action.kind) {
      case "create": {
        const { finalizers = [] } = action.object.metadata;
        const finalizer = this.o.lvmNodeFinalizer;
        const object =
          finalizer && !finalizers.includes(finalizer)
            ? {
                ...action.object,
                metadata: { ...action.object.metadata, finalizers: [...finalizers, finalizer] },
              }
            : action.object;
        const created = await this.o.kube.create(LVM_NODES, namespace, object);
        this.o.log({ msg: "created LVMNode", ...where });
        return created;
      }
      case "update": {
        const updated = await this.o.kube.patch<LVMNodeObject>(
          LVM_NODES,
          namespace,
          action.node,
          action.patch,
        );
        this.o.log({ msg: "updated LVMNode spec from the template", ...where });
        return updated;
      }
      case "delete":
        await this.o.kube.delete(LVM_NODES, namespace, action.node, action.uid);
        this.o.log({ msg: "deleted LVMNode", ...where });
        return undefined;
    }
  }

  private recordRolloutPaused(set: LVMNodeSetObject, status: LVMNodeSetStatus): void {
    const event = rolloutPausedEvent(set, status);
    if (!event) return;
    this.o.log({
      msg: "rollout paused",
      nodeSet: `${set.metadata.namespace}/${set.metadata.name}`,
      note: event.note,
    });
    this.o.record?.(event);
  }

  /** Writes the status computed from `input` when it differs from the set's; true when it wrote. */
  private async patchStatus(set: LVMNodeSetObject, input: StatusInput): Promise<boolean> {
    const status = nodeSetStatus(set, input, this.o.clock.now());
    if (jsonEqual(status, set.status)) return false;
    const { namespace = "", name } = set.metadata;
    const key = `${namespace}/${name}`;
    const interval = this.o.statusIntervalMs ?? 2000;
    const last = this.statusWritten.get(key);
    const t = this.o.clock.now();
    if (this.o.requeue && last !== undefined && t - last < interval) {
      // A status that changes many times a second (a flapping label) is written at most once per interval.
      this.o.requeue(key, last + interval - t);
      return false;
    }
    this.statusWritten.set(key, t);
    this.written.set(key, status);
    await this.o.kube.patch(
      LVM_NODE_SETS,
      namespace,
      name,
      // A merge patch keeps what it does not name: a field the status no longer has (a rollout's
      // `updating` list once it is empty) is removed by name, else every resync would write again.
      {
        metadata: { resourceVersion: set.metadata.resourceVersion },
        status: mergePatch(set.status ?? {}, status),
      },
      "status",
    );
    this.recordRolloutPaused(set, status);
    const was = set.status?.conditions?.find((c) => c.type === "LVMNodesReady");
    const now = status.conditions?.find((c) => c.type === "LVMNodesReady");
    if (was?.reason !== now?.reason)
      this.o.log({ msg: "condition changed", nodeSet: `${namespace}/${name}`, condition: now });
    if (
      now?.reason &&
      WARN_ON.has(now.reason) &&
      (was?.reason !== now.reason || was?.message !== now.message)
    )
      this.o.record?.({
        regarding: { apiVersion: set.apiVersion, kind: "LVMNodeSet", metadata: set.metadata },
        type: "Warning",
        reason: now.reason,
        action: "Reconcile",
        note: now.message ?? now.reason,
      });
    return true;
  }
}

/** A Warning Event when the rollout pauses (or pauses at other nodes). */
function rolloutPausedEvent(set: LVMNodeSetObject, status: LVMNodeSetStatus): EventInput | undefined {
  const was = set.status?.conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  const now = status.conditions?.find((c) => c.type === ROLLOUT_PAUSED);
  if (now?.status !== "True" || (was?.status === "True" && was.message === now.message)) return undefined;
  return {
    regarding: { apiVersion: set.apiVersion, kind: "LVMNodeSet", metadata: set.metadata },
    type: "Warning",
    reason: ROLLOUT_PAUSED,
    action: "Rollout",
    note: now.message ?? ROLLOUT_PAUSED,
  };
}

/** "ns/name" -> ["ns", "name"]; a key without a slash has no namespace. */
export function splitKey(key: string): [string, string] {
  const slash = key.indexOf("/");
  return slash < 0 ? ["", key] : [key.slice(0, slash), key.slice(slash + 1)];
}
