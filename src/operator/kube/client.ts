import type { KubeConnection } from "./connection";
import { KubeApiError } from "./errors";
import { httpTransport, type HttpRequest, type Transport } from "./http";
import { describeObject, resourcePath, type Resource } from "./resources";

/** The parts of an object's metadata the operator reads. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly finalizers?: readonly string[];
  readonly ownerReferences?: readonly OwnerReference[];
}

export interface OwnerReference {
  readonly apiVersion: string;
  readonly kind: string;
  readonly name: string;
  readonly uid: string;
  readonly controller?: boolean;
  readonly blockOwnerDeletion?: boolean;
}

export interface KubeObject {
  readonly metadata: ObjectMeta;
}

export interface KubeList<T> {
  readonly items: T[];
  /** The collection's resourceVersion: where a watch continues from. */
  readonly resourceVersion: string;
}

export interface WatchEvent<T> {
  readonly type: "ADDED" | "MODIFIED" | "DELETED" | "BOOKMARK";
  readonly object: T;
}

/** What the operator does with the API server; every error is a KubeApiError. */
export interface KubeClient {
  /** The object, or undefined when it does not exist. */
  get<T extends KubeObject>(r: Resource, namespace: string | undefined, name: string): Promise<T | undefined>;
  /** Every object (pages of 500), in one namespace or, with undefined, all of them. */
  list<T extends KubeObject>(r: Resource, namespace: string | undefined): Promise<KubeList<T>>;
  /**
   * Streams changes after `resourceVersion` to `onEvent` (bookmarks included) until the server
   * ends the watch (resolves) or it fails (rejects; 410 Expired when that version is gone).
   */
  watch<T extends KubeObject>(
    r: Resource,
    namespace: string | undefined,
    resourceVersion: string,
    onEvent: (e: WatchEvent<T>) => void,
    signal: AbortSignal,
  ): Promise<void>;
  create<T extends KubeObject>(r: Resource, namespace: string, body: T): Promise<T>;
  /** POST to a subresource of an object, e.g. a TokenRequest to serviceaccounts/<name>/token. */
  createSubresource<T>(
    r: Resource,
    namespace: string,
    name: string,
    subresource: string,
    body: unknown,
  ): Promise<T>;
  /** A JSON merge patch (RFC 7386) of the object or its status subresource. */
  patch<T extends KubeObject>(
    r: Resource,
    namespace: string,
    name: string,
    patch: unknown,
    subresource?: "status",
  ): Promise<T>;
  /** Deletes the object only if it still has `uid` (a precondition); resolves when it is gone or going. */
  delete(r: Resource, namespace: string, name: string, uid: string): Promise<void>;
}

/** A completed request, for metrics and tests that count writes. */
export interface RequestRecord {
  readonly verb: "GET" | "LIST" | "WATCH" | "CREATE" | "PATCH" | "DELETE";
  readonly resource: string;
  /** HTTP status; 0 when no response arrived. */
  readonly status: number;
  readonly durationMs: number;
}

export interface KubeClientOptions {
  readonly connection: KubeConnection;
  /** @default the node:http transport */
  readonly transport?: Transport;
  /** Per request. @default 30000 */
  readonly timeoutMs?: number;
  /** The server ends each watch after this long (the client then resumes it). @default 300 */
  readonly watchTimeoutSeconds?: number;
  /** Told about every request when it completes. */
  readonly onRequest?: (record: RequestRecord) => void;
}

const PAGE = 500;

/** A KubeClient over the REST API, JSON and merge patches only. */
export function createKubeClient(options: KubeClientOptions): KubeClient {
  const conn = options.connection;
  const transport = options.transport ?? httpTransport;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const watchSeconds = options.watchTimeoutSeconds ?? 300;
  const record = (verb: RequestRecord["verb"], r: Resource, status: number, t0: number) =>
    options.onRequest?.({ verb, resource: r.plural, status, durationMs: Date.now() - t0 });

  async function call(
    verb: RequestRecord["verb"],
    r: Resource,
    what: string,
    req: Omit<HttpRequest, "timeoutMs">,
  ): Promise<{ status: number; text: string }> {
    const t0 = Date.now();
    try {
      const res = await transport.send(conn, { ...req, timeoutMs });
      record(verb, r, res.status, t0);
      return res;
    } catch (e) {
      record(verb, r, 0, t0);
      throw new KubeApiError(req.method, what, 0, "", (e as Error).message);
    }
  }

  function parse<T>(verb: string, what: string, res: { status: number; text: string }, ok: number[]): T {
    if (!ok.includes(res.status)) throw KubeApiError.fromResponse(verb, what, res.status, res.text);
    try {
      return JSON.parse(res.text) as T;
    } catch {
      throw new KubeApiError(verb, what, res.status, "", "the response is not JSON");
    }
  }

  return {
    async get<T extends KubeObject>(r: Resource, ns: string | undefined, name: string) {
      const what = describeObject(r, ns, name);
      const res = await call("GET", r, what, { method: "GET", path: resourcePath(r, ns, name) });
      if (res.status === 404) return undefined;
      return parse<T>("GET", what, res, [200]);
    },

    async list<T extends KubeObject>(r: Resource, ns: string | undefined) {
      const what = describeObject(r, ns);
      const items: T[] = [];
      let cont = "";
      for (;;) {
        const query = `?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`;
        const res = await call("LIST", r, what, { method: "GET", path: resourcePath(r, ns) + query });
        const page = parse<{ items?: T[]; metadata?: { resourceVersion?: string; continue?: string } }>(
          "LIST",
          what,
          res,
          [200],
        );
        items.push(...(page.items ?? []));
        cont = page.metadata?.continue ?? "";
        if (!cont) return { items, resourceVersion: page.metadata?.resourceVersion ?? "" };
      }
    },

    async watch<T extends KubeObject>(
      r: Resource,
      ns: string | undefined,
      resourceVersion: string,
      onEvent: (e: WatchEvent<T>) => void,
      signal: AbortSignal,
    ) {
      const what = describeObject(r, ns);
      const query =
        `?watch=1&allowWatchBookmarks=true&timeoutSeconds=${watchSeconds}` +
        `&resourceVersion=${encodeURIComponent(resourceVersion)}`;
      const t0 = Date.now();
      let status = 0;
      try {
        const stream = await transport.stream(conn, {
          method: "GET",
          path: resourcePath(r, ns) + query,
          timeoutMs: (watchSeconds + 60) * 1000,
          signal,
        });
        status = stream.status;
        if (status !== 200) {
          const lines: string[] = [];
          for await (const line of stream.lines) lines.push(line);
          throw KubeApiError.fromResponse("WATCH", what, status, lines.join("\n"));
        }
        for await (const line of stream.lines) {
          if (!line.trim()) continue;
          const e = JSON.parse(line) as { type: string; object: unknown };
          if (e.type === "ERROR") {
            const s = e.object as { code?: number; reason?: string; message?: string };
            throw new KubeApiError("WATCH", what, s.code ?? 0, s.reason ?? "", s.message ?? "watch error");
          }
          onEvent(e as WatchEvent<T>);
        }
      } catch (e) {
        if (e instanceof KubeApiError) throw e;
        throw new KubeApiError("WATCH", what, 0, "", (e as Error).message);
      } finally {
        record("WATCH", r, status, t0);
      }
    },

    async create<T extends KubeObject>(r: Resource, ns: string, body: T) {
      const what = describeObject(r, ns, body.metadata.name);
      const res = await call("CREATE", r, what, {
        method: "POST",
        path: resourcePath(r, ns),
        body: JSON.stringify(body),
      });
      return parse<T>("POST", what, res, [201, 200]);
    },

    async createSubresource<T>(r: Resource, ns: string, name: string, subresource: string, body: unknown) {
      const what = `${describeObject(r, ns, name)} (${subresource})`;
      const res = await call("CREATE", { ...r, plural: `${r.plural}/${subresource}` }, what, {
        method: "POST",
        path: resourcePath(r, ns, name, subresource),
        body: JSON.stringify(body),
      });
      return parse<T>("POST", what, res, [201, 200]);
    },

    async patch<T extends KubeObject>(
      r: Resource,
      ns: string,
      name: string,
      patch: unknown,
      subresource?: "status",
    ) {
      const what = describeObject(r, ns, name) + (subresource ? ` (${subresource})` : "");
      const res = await call("PATCH", r, what, {
        method: "PATCH",
        path: resourcePath(r, ns, name, subresource),
        body: JSON.stringify(patch),
        contentType: "application/merge-patch+json",
      });
      return parse<T>("PATCH", what, res, [200]);
    },

    async delete(r: Resource, ns: string, name: string, uid: string) {
      const what = describeObject(r, ns, name);
      const res = await call("DELETE", r, what, {
        method: "DELETE",
        path: resourcePath(r, ns, name),
        body: JSON.stringify({
          apiVersion: "v1",
          kind: "DeleteOptions",
          preconditions: { uid },
          propagationPolicy: "Background",
        }),
      });
      if (res.status === 404) return;
      parse("DELETE", what, res, [200, 202]);
    },
  };
}
