import type { Clock } from "../../kube/clock";
import type { KubeClient, KubePaths } from "../../kube/client";
import { isNotFound } from "../../kube/errors";
import { Informer, objectKey, type RestartReason } from "../../kube/informer";
import { LVM_NODE_SETS, LVM_NODES, NODES, type Resource } from "../../kube/resources";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";
import type { LogicalVolumeObject, PersistentVolumeObject } from "./in-use";
import { approveAccessReview } from "./approvals";
import type { AdmissionReads } from "./review";

/** TopoLVM's LogicalVolumes (cluster-scoped; its CRD stays when TopoLVM is uninstalled). */
const LOGICAL_VOLUMES_PATH = "/apis/topolvm.io/v1/logicalvolumes";

/**
 * How long a list of LogicalVolumes answers later reviews too. A deletion let through on a list
 * this old is no loss: the agents refuse to tear down a volume group that holds volumes, and the
 * set waits Terminating until they are gone (docs/operator.md, Deletion).
 */
const VOLUMES_REUSE_MS = 1000;

/** Answers kept at most (older ones are dropped first): one list, and a PersistentVolume per volume. */
const MAX_KEPT = 4096;

export interface AdmissionCacheOptions {
  readonly kube: KubeClient & KubePaths;
  readonly clock: Clock;
  /** The operator's namespace (LVMNodeSets and LVMNodes); undefined or "": all. */
  readonly namespace?: string;
  /** Told each time one of its watches restarts (metrics, logs). */
  readonly onRestart?: (resource: string, reason: RestartReason, error?: Error) => void;
  /** Watch reconnect delays. @default the informer's */
  readonly backoff?: { readonly baseMs?: number; readonly capMs?: number };
}

/**
 * What the admission webhook reads, served so that a review costs the API server nothing:
 * LVMNodeSets, LVMNodes and Nodes from informers of its own (list + watch, kube/informer.ts),
 * which run on every replica, leader or standby, for as long as the webhook serves — the
 * operator's informers run only while its replica leads. A review reads memory; a flood of forged
 * reviews sends no request.
 *
 * A cache lags the API server by the watch's delivery, a few milliseconds: two overlapping sets
 * created in the same instant may both pass; the operator's tie-break decides such a race
 * (docs/operator.md, Overlap), as it does for a Node label changed in that instant.
 *
 * TopoLVM's LogicalVolumes are not cached: they are read only to refuse a Delete-policy set's
 * deletion, their API may be installed or removed at any time, and a cluster holds many. They are
 * listed from the API server's watch cache (`resourceVersion=0`, no etcd read), one list shared by
 * every review waiting for it (single flight) and reused for VOLUMES_REUSE_MS, and the
 * PersistentVolumes they name are read the same way (GET `resourceVersion=0`): however many reviews
 * come, the API server is read about once a second at most, and only for a set that has LVMNodes.
 */
export class AdmissionCache {
  private readonly sets: Informer<LVMNodeSetObject>;
  private readonly lvmNodes: Informer<LVMNodeObject>;
  private readonly nodes: Informer<NodeObject>;
  /** LogicalVolume lists and PersistentVolumes read lately, by path. */
  private readonly recent = new Map<string, { at: number | undefined; answer: Promise<unknown> }>();
  readonly reads: AdmissionReads;

  constructor(private readonly o: AdmissionCacheOptions) {
    const ns = o.namespace || undefined;
    this.sets = this.informer(LVM_NODE_SETS, ns);
    this.lvmNodes = this.informer(LVM_NODES, ns);
    // Only what a review reads of a Node: a fleet's Node objects (images, conditions) are large.
    this.nodes = this.informer(NODES, undefined, (n: NodeObject) => ({
      metadata: {
        name: n.metadata.name,
        ...pick(n.metadata, ["uid", "resourceVersion", "labels", "deletionTimestamp"]),
      },
    }));
    const ready = (i: { readonly synced: boolean }) => {
      if (!i.synced)
        throw new Error("the webhook's caches are not filled yet (the operator is starting); try again");
    };
    this.reads = {
      nodeSets: async () => (ready(this.sets), this.sets.list()),
      nodes: async () => (ready(this.nodes), this.nodes.list()),
      nodeSet: async (namespace, name) => (
        ready(this.sets),
        this.sets.get(objectKey({ metadata: { namespace, name } }))
      ),
      lvmNodes: async (namespace) => (
        ready(this.lvmNodes),
        this.lvmNodes.list().filter((n) => n.metadata.namespace === namespace)
      ),
      canApprove: async (user, namespace, name) => {
        const r = await o.kube.postPath(
          "/apis/authorization.k8s.io/v1/subjectaccessreviews",
          approveAccessReview(user, namespace, name),
        );
        const status = (r as { status?: { allowed?: boolean; denied?: boolean } }).status;
        return status?.allowed === true && status.denied !== true;
      },
      logicalVolumes: () => this.shared(LOGICAL_VOLUMES_PATH, () => this.listVolumes()),
      persistentVolume: (name) =>
        this.shared(`/api/v1/persistentvolumes/${encodeURIComponent(name)}`, async (path) => {
          try {
            return (await o.kube.getPath(`${path}?resourceVersion=0`)) as PersistentVolumeObject;
          } catch (e) {
            if (isNotFound(e)) return undefined;
            throw e;
          }
        }),
    };
  }

  /** True once every informer holds its first list. */
  get synced(): boolean {
    return this.sets.synced && this.lvmNodes.synced && this.nodes.synced;
  }

  /** Lists and watches until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    await Promise.all([this.sets, this.lvmNodes, this.nodes].map((i) => i.run(signal)));
  }

  /**
   * The answer of `read(path)`: the one in flight, or one that arrived less than VOLUMES_REUSE_MS
   * ago, or a new one. A failed read is not kept.
   */
  private shared<T>(path: string, read: (path: string) => Promise<T>): Promise<T> {
    const now = this.o.clock.monotonic();
    const kept = this.recent.get(path);
    if (kept && (kept.at === undefined || now - kept.at < VOLUMES_REUSE_MS)) return kept.answer as Promise<T>;
    if (this.recent.size >= MAX_KEPT)
      for (const [k, v] of this.recent)
        if (v.at !== undefined && now - v.at >= VOLUMES_REUSE_MS) this.recent.delete(k);
    const entry: { at: number | undefined; answer: Promise<T> } = { at: undefined, answer: read(path) };
    this.recent.set(path, entry);
    entry.answer.then(
      () => (entry.at = this.o.clock.monotonic()),
      () => this.recent.get(path) === entry && this.recent.delete(path),
    );
    return entry.answer;
  }

  private async listVolumes(): Promise<LogicalVolumeObject[] | undefined> {
    try {
      const list = await this.o.kube.getPath(`${LOGICAL_VOLUMES_PATH}?resourceVersion=0`);
      return (list as { items?: LogicalVolumeObject[] }).items ?? [];
    } catch (e) {
      if (isNotFound(e)) return undefined; // TopoLVM's API is not installed: no volume can exist
      throw e;
    }
  }

  private informer<T extends LVMNodeSetObject | LVMNodeObject | NodeObject>(
    resource: Resource,
    namespace: string | undefined,
    transform?: (o: T) => T,
  ): Informer<T> {
    return new Informer<T>({
      kube: this.o.kube,
      resource,
      ...(namespace ? { namespace } : {}),
      clock: this.o.clock,
      onChange: () => undefined,
      ...(transform ? { transform } : {}),
      ...(this.o.backoff ? { backoff: this.o.backoff } : {}),
      onRestart: (reason, error) => this.o.onRestart?.(resource.plural, reason, error),
    });
  }
}

function pick<T extends object, K extends keyof T>(o: T, keys: readonly K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const k of keys) if (o[k] !== undefined) out[k] = o[k];
  return out;
}
