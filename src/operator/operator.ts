import type { AgentClient } from "../agent-client/agent-client";
import { ApiReachability } from "./api-reachability";
import { EventRecorder, type EventInput } from "./events/recorder";
import { AgentDriver, type AgentTls } from "./agents/driver";
import type { AgentTokenSource } from "./agents/token-file";
import type { Clock } from "../kube/clock";
import {
  isLVMNodeStatusChange,
  keysForLVMNodeChange,
  keysForNodeChange,
  keysForNodeSetChange,
} from "./nodeset/event-mapping";
import { Informer, objectKey, type RestartReason } from "../kube/informer";
import type { KubeClient, KubeObject } from "../kube/client";
import { LVM_NODES, LVM_NODE_SETS, NODES, PODS, type Resource } from "../kube/resources";
import {
  keysForAgentPodChange,
  keysForControllingSetChange,
  keysForNodeDeleted,
  keysForNodeSelectionChange,
  keysForOwnLVMNodeChange,
  keysForRivalLVMNodes,
} from "./lvmnode/event-mapping";
import { LVMNODE_FINALIZER, LVMNodeReconciler, ReconcileStoppedError } from "./lvmnode/reconciler";
import type { OperatorMetrics } from "./metrics";
import { NodeSetReconciler, StaleCacheError, type ReconcileResult } from "./nodeset/reconciler";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "./types";
import { WorkQueue } from "../kube/work-queue";
import { whenAborted } from "../process/stop-signal";

/** How the operator reaches the node agents. */
export interface OperatorAgentOptions {
  /** The namespace of the agent pods (the LvmSystem's). @example "lvm-system" */
  readonly namespace: string;
  /** The agents' /v1 client. */
  readonly client: AgentClient;
  /** The operator's token for one node's agent (by default a TokenRequest per node, agents/token-request.ts). */
  readonly token: AgentTokenSource;
  /** HTTPS against the agents' CA with a fixed server name, or "plain-http" (an explicit opt-out). */
  readonly tls: AgentTls;
}

export interface OperatorOptions {
  readonly kube: KubeClient;
  readonly clock: Clock;
  readonly metrics: OperatorMetrics;
  /** One structured log entry. */
  readonly log: (entry: Record<string, unknown>) => void;
  /** Watch LVMNodeSets and LVMNodes in this namespace only. @default all namespaces */
  readonly namespace?: string;
  /** LVMNodeSet reconciles running at once (never two of the same set). @default 2 */
  readonly workers?: number;
  /**
   * LVMNode reconciles running at once (never two of the same LVMNode). Each spends most of its
   * time waiting on its own node's agent (a plan is a full discovery on that node) and on a few API
   * requests, so N nodes are N independent machines to wait on: with 2, a fleet of 500 was driven
   * two nodes at a time. @default 16
   */
  readonly lvmNodeWorkers?: number;
  /**
   * Drive the node agents: an LVMNode reconciler on its own queue keeps each LVMNode's node and
   * status true. Absent: LVMNodes are only created and kept to their template (the set
   * reconciler's own tests run so).
   */
  readonly agents?: OperatorAgentOptions;
  /**
   * How long a node must stay out of a set's selector before its LVMNode is deleted (a flapping
   * label must not start a teardown). @default 60000
   */
  readonly deselectionGraceMs?: number;
  /** Reconcile every set and LVMNode this often even without a change (drift on the nodes). @default 300000 (5 minutes) */
  readonly resyncMs?: number;
  /** Retry delays of a failing set. @default { baseMs: 1000, capMs: 300000 } */
  readonly retryBackoff?: { readonly baseMs?: number; readonly capMs?: number };
  /** Watch reconnect delays. @default { baseMs: 500, capMs: 30000 } */
  readonly watchBackoff?: { readonly baseMs?: number; readonly capMs?: number };
  /**
   * Record Kubernetes Events (events.k8s.io/v1, events/recorder.ts) as `instance` (this replica):
   * applies, failures, claimed devices, overlaps, blocked plans, teardowns. @default none
   */
  readonly events?: { readonly instance: string };
  /**
   * Create the StorageClasses and VolumeSnapshotClasses of sets applied without Pulumi
   * (nodeset/classes.ts; the subcommand does). @default false
   */
  readonly classObjects?: boolean;
  /** Report the sets' ProviderReady condition (nodeset/provider.ts). @default false */
  readonly providerReady?: boolean;
}

/**
 * The operator: informers on LVMNodeSets, LVMNodes and Nodes feed the keys of the sets a change
 * concerns into one work queue, whose workers run the LVMNodeSet reconciler. With `agents`, a
 * second queue of LVMNode keys (fed by LVMNode, agent pod and Node changes) runs the LVMNode
 * reconciler, which drives each node's agent.
 */
export class Operator {
  readonly queue: WorkQueue;
  readonly reconciler: NodeSetReconciler;
  /** LVMNode keys, when the operator drives the agents. */
  readonly nodeQueue?: WorkQueue;
  readonly nodeReconciler?: LVMNodeReconciler;
  private readonly sets: Informer<LVMNodeSetObject>;
  private readonly lvmNodes: Informer<LVMNodeObject>;
  private readonly nodes: Informer<NodeObject>;
  private readonly pods?: Informer<KubeObject>;
  private started = false;
  /** Whether the API server answers; reconciles wait while it does not. */
  readonly api: ApiReachability;
  private readonly kube: KubeClient;
  /** The Event recorder, when the operator records Events. */
  readonly events?: EventRecorder;

  constructor(private readonly o: OperatorOptions) {
    // The probe: a GET of a Node that does not exist (404 is an answer), as small as a request gets.
    this.api = new ApiReachability(o.clock, o.log, () => o.kube.get(NODES, undefined, "pulumi-lvm-probe"));
    this.kube = this.api.watching(o.kube);
    this.events = o.events
      ? new EventRecorder({ kube: this.kube, clock: o.clock, log: o.log, instance: o.events.instance })
      : undefined;
    const record = this.events ? { record: (e: EventInput) => this.events!.record(e) } : {};
    const backoff = o.retryBackoff ? { backoff: o.retryBackoff } : {};
    this.queue = new WorkQueue({ clock: o.clock, ...backoff });
    const nodeQueue = o.agents ? new WorkQueue({ clock: o.clock, ...backoff }) : undefined;
    const enqueue = (keys: readonly string[]) => keys.forEach((k) => this.queue.add(k));
    const enqueueNodes = (keys: readonly string[]) => keys.forEach((k) => nodeQueue?.add(k));
    this.sets = this.informer(LVM_NODE_SETS, o.namespace, (c) => {
      enqueue(keysForNodeSetChange(c, (key) => this.reconciler?.lastStatus(key)));
      enqueueNodes(keysForControllingSetChange(c, this.lvmNodes.list()));
    });
    this.lvmNodes = this.informer(LVM_NODES, o.namespace, (c) => {
      const sets = keysForLVMNodeChange(c, this.sets.list(), (name) => this.nodes.get(name));
      // A status the set only counts: one set reconcile per burst (a fleet converging writes
      // thousands), not one per write; its status is written at most every 2 s anyway.
      if (isLVMNodeStatusChange(c)) sets.forEach((k) => this.queue.addAfter(k, STATUS_COALESCE_MS));
      else enqueue(sets);
      enqueueNodes(keysForOwnLVMNodeChange(c));
      enqueueNodes(keysForRivalLVMNodes(c, this.lvmNodes.list()));
    });
    this.nodes = this.informer(NODES, undefined, (c) => {
      enqueue(keysForNodeChange(c, this.sets.list()));
      enqueueNodes(keysForNodeDeleted(c, this.lvmNodes.list()));
      enqueueNodes(keysForNodeSelectionChange(c, this.lvmNodes.list()));
    });
    if (o.agents && nodeQueue) {
      const pods = this.informer<KubeObject>(PODS, o.agents.namespace, (c) =>
        enqueueNodes(keysForAgentPodChange(c, this.lvmNodes.list())),
      );
      this.pods = pods;
      this.nodeQueue = nodeQueue;
      this.nodeReconciler = new LVMNodeReconciler({
        kube: this.kube,
        clock: o.clock,
        log: o.log,
        node: (name) => this.nodes.get(name),
        sets: () => this.sets.list(),
        lvmNodes: () => this.lvmNodes.list(),
        read: (key) => this.lvmNodes.get(key),
        requeue: (key, ms) => nodeQueue.addAfter(key, ms),
        ...record,
        agents: new AgentDriver({
          ...o.agents,
          pods: () => pods.list(),
          clock: o.clock,
          onCall: (call, result, seconds) => o.metrics.recordAgentCall(call, result, seconds),
        }),
      });
    }
    this.reconciler = new NodeSetReconciler({
      kube: this.kube,
      clock: o.clock,
      log: o.log,
      nodes: () => this.nodes.list(),
      lvmNodes: () => this.lvmNodes.list(),
      requeue: (key, ms) => this.queue.addAfter(key, ms),
      ...record,
      ...(o.deselectionGraceMs !== undefined ? { deselectionGraceMs: o.deselectionGraceMs } : {}),
      ...(o.classObjects ? { classObjects: true } : {}),
      ...(o.providerReady ? { providerReady: true } : {}),
      // The LVMNode reconciler would add it right away; only it removes it, so only when it runs.
      ...(o.agents ? { lvmNodeFinalizer: LVMNODE_FINALIZER } : {}),
    });
  }

  /** True once every cache is filled and workers run. */
  get ready(): boolean {
    return this.started;
  }

  /** Runs until `signal` aborts; a reconcile in progress finishes first. */
  async run(signal: AbortSignal): Promise<void> {
    const informers = [this.sets, this.lvmNodes, this.nodes, ...(this.pods ? [this.pods] : [])];
    const watching = informers.map((i) => i.run(signal));
    await Promise.race([Promise.all(informers.map((i) => i.whenSynced())), whenAborted(signal)]);
    if (signal.aborted) return void (await Promise.all(watching));
    this.o.log({
      msg: "caches synced",
      nodeSets: this.sets.list().length,
      lvmNodes: this.lvmNodes.list().length,
      nodes: this.nodes.list().length,
      ...(this.pods ? { agentNamespacePods: this.pods.list().length } : {}),
    });
    this.started = true;
    const addAll = () => {
      for (const set of this.sets.list()) this.queue.add(objectKey(set));
      for (const node of this.nodeQueue ? this.lvmNodes.list() : []) this.nodeQueue?.add(objectKey(node));
    };
    const resync = () => {
      if (signal.aborted) return;
      addAll();
      cancelResync = this.o.clock.setTimer(this.o.resyncMs ?? 300_000, resync);
    };
    let cancelResync = this.o.clock.setTimer(this.o.resyncMs ?? 300_000, resync);
    signal.addEventListener("abort", () => cancelResync(), { once: true });
    addAll();
    const workers = this.o.workers ?? 2;
    await Promise.all([
      this.queue.run(
        workers,
        async (key) => {
          // While the API server does not answer, keys wait here instead of failing one by one.
          await this.api.whenReachable(signal);
          if (!signal.aborted) await this.reconcileOne(key);
          return {};
        },
        signal,
      ),
      ...(this.nodeQueue
        ? [
            this.nodeQueue.run(
              this.o.lvmNodeWorkers ?? DEFAULT_LVMNODE_WORKERS,
              async (key, release) => {
                await this.api.whenReachable(signal);
                if (!signal.aborted) await this.reconcileLVMNode(key, signal, release);
                return {};
              },
              signal,
            ),
          ]
        : []),
      ...watching,
    ]);
    // Events recorded by the last reconciles reach the API server before the operator says it stopped.
    await this.events?.flush();
    this.events?.close();
    this.api.close();
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
      // An unreachable API server is logged once (ApiReachability), not once per key and retry.
      if (this.api.reachable)
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

  /**
   * Reconciles the LVMNode `key` with its agent (for tests and the queue): the result, with metrics
   * and logs. `stop` aborts its agent plan and status calls; an apply already sent is waited for.
   * `release` gives the queue worker's slot to another before an apply or teardown is sent.
   */
  async reconcileLVMNode(key: string, stop?: AbortSignal, release?: () => void): Promise<ReconcileResult> {
    const reconciler = this.nodeReconciler;
    if (!reconciler) throw new Error("the operator was started without agent options");
    let result: ReconcileResult = "error";
    try {
      result = await reconciler.reconcile(key, stop, release);
      return result;
    } catch (e) {
      if (this.api.reachable || e instanceof ReconcileStoppedError)
        this.o.log({
          msg:
            e instanceof ReconcileStoppedError
              ? "LVMNode reconcile stopped; the next operator carries on"
              : "LVMNode not in sync; retrying with backoff",
          lvmNode: key,
          error: (e as Error).message,
          retries: this.nodeQueue?.retries(key) ?? 0,
        });
      throw e;
    } finally {
      this.o.metrics.lvmNodeReconciles.inc({ result });
    }
  }

  /**
   * For /metrics: the LVMNode queue's depth, the LVMNodes by state and those whose plan waits for
   * approval; undefined without agents.
   */
  lvmNodeGauges():
    | {
        queueDepth: number;
        byState: Record<string, number>;
        awaitingApproval: { namespace: string; name: string }[];
      }
    | undefined {
    if (!this.nodeQueue) return undefined;
    const byState: Record<string, number> = {};
    const awaitingApproval: { namespace: string; name: string }[] = [];
    for (const n of this.lvmNodes.list()) {
      const state = n.status?.state ?? "None";
      byState[state] = (byState[state] ?? 0) + 1;
      if (n.status?.pendingApproval)
        awaitingApproval.push({ namespace: n.metadata.namespace ?? "", name: n.metadata.name });
    }
    return { queueDepth: this.nodeQueue.depth, byState, awaitingApproval };
  }

  private informer<T extends KubeObject>(
    resource: Resource,
    namespace: string | undefined,
    onChange: ConstructorParameters<typeof Informer<T>>[0]["onChange"],
  ): Informer<T> {
    return new Informer<T>({
      kube: this.kube,
      resource,
      ...(namespace ? { namespace } : {}),
      clock: this.o.clock,
      onChange,
      ...(this.o.watchBackoff ? { backoff: this.o.watchBackoff } : {}),
      onRestart: (reason: RestartReason, error?: Error) => {
        this.o.metrics.watchRestarts.inc({ resource: resource.plural, reason });
        // Each reconnect is counted; it is logged unless the API server is known to be unreachable.
        if (this.api.reachable)
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

/** How long a set waits after an LVMNode status change before it is reconciled (changes meanwhile join it). */
const STATUS_COALESCE_MS = 1000;

/** LVMNode reconciles at once unless told (--lvmnode-workers). */
export const DEFAULT_LVMNODE_WORKERS = 16;
