import type { Clock } from "./clock";
import { keysForLVMNodeChange, keysForNodeChange, keysForNodeSetChange } from "./event-mapping";
import { Informer, objectKey, type RestartReason } from "./informer";
import type { KubeClient } from "./kube/client";
import { LVM_NODES, LVM_NODE_SETS, NODES, type Resource } from "./kube/resources";
import type { OperatorMetrics } from "./metrics";
import { NodeSetReconciler, StaleCacheError, type ReconcileResult } from "./reconciler";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "./types";
import { WorkQueue } from "./work-queue";

export interface OperatorOptions {
  readonly kube: KubeClient;
  readonly clock: Clock;
  readonly metrics: OperatorMetrics;
  /** One structured log entry. */
  readonly log: (entry: Record<string, unknown>) => void;
  /** Watch LVMNodeSets and LVMNodes in this namespace only. @default all namespaces */
  readonly namespace?: string;
  /** Reconciles running at once (never two of the same set). @default 2 */
  readonly workers?: number;
  /** Reconcile every set this often even without a change. @default 600000 (10 minutes) */
  readonly resyncMs?: number;
  /** Retry delays of a failing set. @default { baseMs: 1000, capMs: 300000 } */
  readonly retryBackoff?: { readonly baseMs?: number; readonly capMs?: number };
  /** Watch reconnect delays. @default { baseMs: 500, capMs: 30000 } */
  readonly watchBackoff?: { readonly baseMs?: number; readonly capMs?: number };
}

/**
 * The operator: informers on LVMNodeSets, LVMNodes and Nodes feed the keys of the sets a change
 * concerns into one work queue, whose workers run the LVMNodeSet reconciler.
 */
export class Operator {
  readonly queue: WorkQueue;
  readonly reconciler: NodeSetReconciler;
  private readonly sets: Informer<LVMNodeSetObject>;
  private readonly lvmNodes: Informer<LVMNodeObject>;
  private readonly nodes: Informer<NodeObject>;
  private started = false;

  constructor(private readonly o: OperatorOptions) {
    this.queue = new WorkQueue({ clock: o.clock, ...(o.retryBackoff ? { backoff: o.retryBackoff } : {}) });
    const enqueue = (keys: readonly string[]) => keys.forEach((k) => this.queue.add(k));
    this.sets = this.informer(LVM_NODE_SETS, o.namespace, (c) => enqueue(keysForNodeSetChange(c)));
    this.lvmNodes = this.informer(LVM_NODES, o.namespace, (c) =>
      enqueue(keysForLVMNodeChange(c, this.sets.list(), (name) => this.nodes.get(name))),
    );
    this.nodes = this.informer(NODES, undefined, (c) => enqueue(keysForNodeChange(c, this.sets.list())));
    this.reconciler = new NodeSetReconciler({
      kube: o.kube,
      clock: o.clock,
      log: o.log,
      nodes: () => this.nodes.list(),
      lvmNodes: () => this.lvmNodes.list(),
    });
  }

  /** True once every cache is filled and workers run. */
  get ready(): boolean {
    return this.started;
  }

  /** Runs until `signal` aborts; a reconcile in progress finishes first. */
  async run(signal: AbortSignal): Promise<void> {
    const informers = [this.sets, this.lvmNodes, this.nodes];
    const watching = informers.map((i) => i.run(signal));
    await Promise.race([Promise.all(informers.map((i) => i.whenSynced())), aborted(signal)]);
    if (signal.aborted) return void (await Promise.all(watching));
    this.o.log({
      msg: "caches synced",
      nodeSets: this.sets.list().length,
      lvmNodes: this.lvmNodes.list().length,
      nodes: this.nodes.list().length,
    });
    this.started = true;
    const resync = () => {
      if (signal.aborted) return;
      for (const set of this.sets.list()) this.queue.add(objectKey(set));
      cancelResync = this.o.clock.setTimer(this.o.resyncMs ?? 600_000, resync);
    };
    let cancelResync = this.o.clock.setTimer(this.o.resyncMs ?? 600_000, resync);
    signal.addEventListener("abort", () => cancelResync(), { once: true });
    for (const set of this.sets.list()) this.queue.add(objectKey(set));
    await Promise.all([
      this.queue.run(this.o.workers ?? 2, async (key) => (await this.reconcileOne(key), {}), signal),
      ...watching,
    ]);
    this.started = false;
  }

  /** Reconciles `key` (for tests and the queue): the result, with metrics and logs. */
  async reconcileOne(key: string): Promise<ReconcileResult> {
    const t0 = this.o.clock.now();
    let result: ReconcileResult = "error";
    try {
      result = await this.reconciler.reconcile(key);
      return result;
    } catch (e) {
      const error = e as Error;
      this.o.log({
        msg: e instanceof StaleCacheError ? "stale cache; retrying" : "reconcile failed",
        nodeSet: key,
        error: error.message,
        retries: this.queue.retries(key),
      });
      throw e;
    } finally {
      this.o.metrics.recordReconcile(result, (this.o.clock.now() - t0) / 1000);
    }
  }

  private informer<T extends LVMNodeSetObject | LVMNodeObject | NodeObject>(
    resource: Resource,
    namespace: string | undefined,
    onChange: ConstructorParameters<typeof Informer<T>>[0]["onChange"],
  ): Informer<T> {
    return new Informer<T>({
      kube: this.o.kube,
      resource,
      ...(namespace ? { namespace } : {}),
      clock: this.o.clock,
      onChange,
      ...(this.o.watchBackoff ? { backoff: this.o.watchBackoff } : {}),
      onRestart: (reason: RestartReason, error?: Error) => {
        this.o.metrics.watchRestarts.inc({ resource: resource.plural, reason });
        this.o.log({
          msg: "watch restarted",
          resource: resource.plural,
          reason,
          ...(error ? { error: error.message } : {}),
        });
      },
    });
  }
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
}
