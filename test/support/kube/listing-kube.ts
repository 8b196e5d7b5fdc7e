import type { KubeClient, KubeList, KubeObject, KubePaths, WatchEvent } from "../../../src/kube/client";
import { KubeApiError } from "../../../src/kube/errors";
import type { Resource } from "../../../src/kube/resources";

/**
 * A read-only API server for caches: each resource's list is what the test put there, a watch
 * delivers what the test sends until its signal aborts, `getPath` answers from `paths` (404 when
 * absent) after `pathDelayMs`. Every request is counted in `requests` ("LIST lvmnodesets",
 * "WATCH nodes", "GET /apis/..."). Writes throw.
 */
export class ListingKube implements KubeClient, KubePaths {
  readonly requests: string[] = [];
  readonly lists = new Map<string, KubeObject[]>();
  readonly paths = new Map<string, unknown>();
  pathDelayMs = 0;
  private readonly watchers = new Map<string, Array<(e: WatchEvent<KubeObject>) => void>>();

  /** Requests other than the watches' (each informer holds one open). */
  get reads(): string[] {
    return this.requests.filter((r) => !r.startsWith("WATCH "));
  }

  async list<T extends KubeObject>(r: Resource, namespace: string | undefined): Promise<KubeList<T>> {
    this.requests.push(`LIST ${r.plural}`);
    const items = (this.lists.get(r.plural) ?? []).filter(
      (o) => namespace === undefined || o.metadata.namespace === namespace,
    );
    return { items: items as T[], resourceVersion: "1" };
  }

  watch<T extends KubeObject>(
    r: Resource,
    _namespace: string | undefined,
    _rv: string | undefined,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void> {
    this.requests.push(`WATCH ${r.plural}`);
    const list = this.watchers.get(r.plural) ?? [];
    const deliver = onEvent as (e: WatchEvent<KubeObject>) => void;
    list.push(deliver);
    this.watchers.set(r.plural, list);
    return new Promise((resolve) =>
      signal.addEventListener(
        "abort",
        () => {
          list.splice(list.indexOf(deliver), 1);
          resolve();
        },
        { once: true },
      ),
    );
  }

  /** Sends a watch event to every watch of `plural`. */
  send(plural: string, e: WatchEvent<KubeObject>): void {
    for (const w of this.watchers.get(plural) ?? []) w(e);
  }

  async getPath(path: string): Promise<unknown> {
    this.requests.push(`GET ${path}`);
    if (this.pathDelayMs) await new Promise((r) => setTimeout(r, this.pathDelayMs));
    const key = path.split("?")[0]!;
    if (!this.paths.has(key)) throw new KubeApiError("GET", key, 404, "NotFound", "not found");
    return this.paths.get(key);
  }

  async get<T extends KubeObject>(
    r: Resource,
    namespace: string | undefined,
    name: string,
  ): Promise<T | undefined> {
    this.requests.push(`GET ${r.plural}/${namespace ?? ""}/${name}`);
    return (this.lists.get(r.plural) ?? []).find(
      (o) => o.metadata.name === name && (namespace === undefined || o.metadata.namespace === namespace),
    ) as T | undefined;
  }

  create<T>(): Promise<T> {
    throw new Error("ListingKube is read-only");
  }
  createSubresource<T>(): Promise<T> {
    throw new Error("ListingKube is read-only");
  }
  patch<T>(): Promise<T> {
    throw new Error("ListingKube is read-only");
  }
  delete(): Promise<void> {
    throw new Error("ListingKube is read-only");
  }
  postPath(): Promise<unknown> {
    throw new Error("ListingKube is read-only");
  }
}
