import type { KubeClient, KubeList, KubeObject } from "../../../src/kube/client";
import { KubeApiError } from "../../../src/kube/errors";
import { describeObject, type Resource } from "../../../src/kube/resources";
import { applyMergePatch } from "../../../src/kube/merge-patch";

/** One request the fake API server answered (or refused). */
export interface FakeCall {
  readonly verb: "GET" | "PATCH" | "CREATE";
  /** "LVMNode storage/n1", with " (status)" for the status subresource. */
  readonly object: string;
  readonly patch?: unknown;
}

/**
 * An in-memory API server for reconciler unit tests: get and merge-patch (metadata or the status
 * subresource), a resourceVersion precondition that gives 409 Conflict, the removal of the last
 * finalizer of an object being deleted deleting it, and every request recorded in `calls`.
 * create (409 AlreadyExists when the name is taken; for the Lease of leader election). Lists,
 * watches, create of subresources and delete are not needed by the reconcilers and throw.
 */
export class FakeKube implements KubeClient {
  readonly calls: FakeCall[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private readonly failures: Array<{ verb: FakeCall["verb"]; error: Error }> = [];
  private version = 100;

  /** Stores `object` as the API server would return it (with a new resourceVersion). */
  put<T extends KubeObject>(r: Resource, object: T): T {
    const stored = { ...object, metadata: { ...object.metadata, resourceVersion: String(++this.version) } };
    this.objects.set(this.key(r, object.metadata.namespace, object.metadata.name), stored);
    return stored;
  }

  /** The stored object, or undefined. */
  peek<T extends KubeObject>(r: Resource, namespace: string, name: string): T | undefined {
    return this.objects.get(this.key(r, namespace, name)) as T | undefined;
  }

  /** The next request with `verb` fails with `error` (after being recorded). */
  failNext(verb: FakeCall["verb"], error: Error): void {
    this.failures.push({ verb, error });
  }

  /** The PATCH and CREATE requests: what the reconciler wrote. */
  get writes(): FakeCall[] {
    return this.calls.filter((c) => c.verb === "PATCH" || c.verb === "CREATE");
  }

  async get<T extends KubeObject>(r: Resource, namespace: string | undefined, name: string) {
    this.record({ verb: "GET", object: describeObject(r, namespace, name) });
    return this.objects.get(this.key(r, namespace, name)) as T | undefined;
  }

  async patch<T extends KubeObject>(
    r: Resource,
    namespace: string,
    name: string,
    patch: unknown,
    subresource?: "status",
  ): Promise<T> {
    const object = `${describeObject(r, namespace, name)}${subresource ? ` (${subresource})` : ""}`;
    this.record({ verb: "PATCH", object, patch });
    const key = this.key(r, namespace, name);
    const current = this.objects.get(key);
    if (!current) throw new KubeApiError("PATCH", object, 404, "NotFound", `${name} not found`);
    const wanted = (patch as { metadata?: { resourceVersion?: string } }).metadata?.resourceVersion;
    if (wanted && wanted !== current.metadata.resourceVersion)
      throw new KubeApiError("PATCH", object, 409, "Conflict", "the object has been modified");
    const { status, ...rest } = patch as { status?: unknown };
    // The status subresource changes only status; the object itself everything else.
    const applied = applyMergePatch(current, subresource ? { status } : rest) as T;
    if (applied.metadata.deletionTimestamp && !applied.metadata.finalizers?.length) {
      this.objects.delete(key);
      return applied;
    }
    return this.put(r, applied);
  }

  list<T extends KubeObject>(): Promise<KubeList<T>> {
    throw new Error("FakeKube: list is not faked");
  }

  watch(): Promise<void> {
    throw new Error("FakeKube: watch is not faked");
  }

  async create<T extends KubeObject>(r: Resource, namespace: string, body: T): Promise<T> {
    const object = describeObject(r, namespace, body.metadata.name);
    this.record({ verb: "CREATE", object });
    if (this.objects.has(this.key(r, namespace, body.metadata.name)))
      throw new KubeApiError("POST", object, 409, "AlreadyExists", `${body.metadata.name} already exists`);
    return this.put(r, { ...body, metadata: { ...body.metadata, namespace } });
  }

  createSubresource<T>(): Promise<T> {
    throw new Error("FakeKube: createSubresource is not faked");
  }

  delete(): Promise<void> {
    throw new Error("FakeKube: delete is not faked");
  }

  private record(call: FakeCall): void {
    this.calls.push(call);
    const i = this.failures.findIndex((f) => f.verb === call.verb);
    if (i >= 0) throw this.failures.splice(i, 1)[0]!.error;
  }

  private key(r: Resource, namespace: string | undefined, name: string): string {
    return `${r.plural}/${namespace ?? ""}/${name}`;
  }
}
