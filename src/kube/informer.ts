import { backoffDelay, type BackoffOptions } from "./backoff";
import { sleep, type Clock } from "./clock";
import type { KubeClient, KubeObject, WatchEvent } from "./client";
import { KubeApiError } from "./errors";
import type { Resource } from "./resources";

/** A change the informer saw; `old` is the cached object it replaced (updated, deleted). */
export interface Change<T> {
  readonly type: "added" | "updated" | "deleted";
  readonly object: T;
  readonly old?: T;
}

/** Why a watch was started again. */
export type RestartReason = "closed" | "expired" | "error";

export interface InformerOptions<T extends KubeObject> {
  readonly kube: KubeClient;
  readonly resource: Resource;
  /** Watch one namespace; undefined: all namespaces (and cluster-scoped resources). */
  readonly namespace?: string;
  readonly clock: Clock;
  /** Called for every change of the cache, after the cache holds it. */
  readonly onChange: (change: Change<T>) => void;
  /** Told each time the watch restarts (metrics, logs). */
  readonly onRestart?: (reason: RestartReason, error?: Error) => void;
  /** Reconnect delays. @default { baseMs: 500, capMs: 30000 } */
  readonly backoff?: BackoffOptions;
  /** What of each object the cache keeps (client-go's transform): a smaller copy, never a change of identity. */
  readonly transform?: (object: T) => T;
}

/** "namespace/name", or "name" for a cluster-scoped object: the cache's and the work queue's key. */
export function objectKey(o: KubeObject): string {
  return o.metadata.namespace ? `${o.metadata.namespace}/${o.metadata.name}` : o.metadata.name;
}

/**
 * A cache of one resource kept current by list + watch, as client-go's reflector does: the watch
 * resumes from the last resourceVersion it saw (bookmarks included); a 410 Gone (the version was
 * compacted away) makes it list again, and the differences to the cache become changes; any other
 * failure reconnects after a capped exponential backoff. A watch the server ends normally resumes
 * at once, unless it ended without delivering anything, which counts as a failure.
 */
export class Informer<T extends KubeObject> {
  private readonly store = new Map<string, T>();
  private syncedOnce = false;
  private readonly syncWaiters: Array<() => void> = [];

  constructor(private readonly options: InformerOptions<T>) {}

  /** True once the first list is in the cache. */
  get synced(): boolean {
    return this.syncedOnce;
  }

  /** Resolves once the first list is in the cache. */
  whenSynced(): Promise<void> {
    return this.syncedOnce ? Promise.resolve() : new Promise((r) => this.syncWaiters.push(r));
  }

  get(key: string): T | undefined {
    return this.store.get(key);
  }

  list(): T[] {
    return [...this.store.values()];
  }

  /** Lists and watches until `signal` aborts. */
  async run(signal: AbortSignal): Promise<void> {
    const { kube, resource, namespace, clock } = this.options;
    let resourceVersion: string | undefined;
    let failures = 0;
    while (!signal.aborted) {
      let delivered = false;
      try {
        if (resourceVersion === undefined) {
          const list = await kube.list<T>(resource, namespace);
          this.replace(list.items);
          resourceVersion = list.resourceVersion;
        }
        await kube.watch<T>(
          resource,
          namespace,
          resourceVersion,
          (e) => {
            delivered = true;
            failures = 0;
            resourceVersion = e.object.metadata.resourceVersion ?? resourceVersion;
            this.apply(e);
          },
          signal,
        );
        if (signal.aborted) break;
        this.options.onRestart?.("closed");
        if (!delivered) await sleep(clock, this.delay(failures++), signal);
      } catch (e) {
        if (signal.aborted) break;
        const error = e as Error;
        if (e instanceof KubeApiError && e.status === 410) {
          // Expired: the cache is still served; the next list brings it up to date.
          resourceVersion = undefined;
          this.options.onRestart?.("expired", error);
          if (failures > 0) await sleep(clock, this.delay(failures++), signal);
          else failures++;
        } else {
          this.options.onRestart?.("error", error);
          await sleep(clock, this.delay(failures++), signal);
        }
      }
    }
  }

  private delay(failures: number): number {
    return backoffDelay(failures, { baseMs: 500, capMs: 30_000, ...this.options.backoff });
  }

  private apply(e: WatchEvent<T>): void {
    if (e.type === "BOOKMARK") return;
    const object = this.options.transform ? this.options.transform(e.object) : e.object;
    const key = objectKey(object);
    const old = this.store.get(key);
    if (e.type === "DELETED") {
      this.store.delete(key);
      this.options.onChange({ type: "deleted", object, ...(old ? { old } : {}) });
      return;
    }
    this.store.set(key, object);
    this.options.onChange(old ? { type: "updated", object, old } : { type: "added", object });
  }

  /** A fresh list: what is gone is deleted, what is new or changed is reported. */
  private replace(items: readonly T[]): void {
    const transform = this.options.transform;
    const fresh = new Map(items.map((o) => [objectKey(o), transform ? transform(o) : o]));
    for (const [key, old] of [...this.store]) {
      if (fresh.has(key)) continue;
      this.store.delete(key);
      this.options.onChange({ type: "deleted", object: old, old });
    }
    for (const [key, object] of fresh) {
      const old = this.store.get(key);
      this.store.set(key, object);
      if (!old) this.options.onChange({ type: "added", object });
      else if (old.metadata.resourceVersion !== object.metadata.resourceVersion)
        this.options.onChange({ type: "updated", object, old });
    }
    if (!this.syncedOnce) {
      this.syncedOnce = true;
      this.syncWaiters.splice(0).forEach((r) => r());
    }
  }
}
