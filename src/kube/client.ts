import { apiUrl, requestCredentials, type KubeConnection } from "./connection";
import { KubeApiError } from "./errors";
import {
  createHttpTransport,
  httpStream,
  httpTransport,
  type HttpRequest,
  type StreamTransport,
  type Transport,
} from "./http";
import { describeObject, resourcePath, type Resource } from "./resources";

/** The parts of an object's metadata the clients read. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly resourceVersion?: string;
  readonly generation?: number;
  readonly creationTimestamp?: string;
  readonly deletionTimestamp?: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
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

/** The object verbs (what the operator does with the API server); every error is a KubeApiError. */
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

/**
 * Requests by path, for what is not an object's get/list/watch/create/patch/delete: TokenRequest,
 * TokenReview, SubjectAccessReview, lists with a label selector. Answers are JSON, unchecked.
 */
export interface KubePaths {
  /** GET `path` (path and query, below the server's path prefix); any 2xx answer. */
  getPath(path: string): Promise<unknown>;
  /** GET `path` as text, for answers that are not JSON (a pod's log); any 2xx answer. */
  getText?(path: string): Promise<string>;
  /** POST `body` as JSON to `path`; any 2xx answer. */
  postPath(path: string, body: unknown): Promise<unknown>;
  /**
   * Server-side apply of `body` to the object at `path` as `fieldManager` (forced: the fields it
   * names become this manager's, the others' stay theirs); any 2xx answer.
   */
  applyPath?(path: string, body: unknown, fieldManager: string): Promise<unknown>;
}

/** A completed request, for metrics and tests that count writes. */
export interface RequestRecord {
  readonly verb: "GET" | "LIST" | "WATCH" | "CREATE" | "PATCH" | "DELETE" | "POST";
  readonly resource: string;
  /** HTTP status; 0 when no response arrived. */
  readonly status: number;
  readonly durationMs: number;
}

export interface KubeClientOptions {
  readonly connection: KubeConnection;
  /** @default the node:http transport (http.ts) */
  readonly transport?: Transport;
  /** For watches. @default the node:http stream (http.ts) */
  readonly stream?: StreamTransport;
  /** Per request. @default 30000 */
  readonly timeoutMs?: number;
  /** The server ends each watch after this long (the client then resumes it). @default 300 */
  readonly watchTimeoutSeconds?: number;
  /** Used when no transport is given. @default 64 MiB (http.ts) */
  readonly maxBodyBytes?: number;
  /** Told about every request when it completes. */
  readonly onRequest?: (record: RequestRecord) => void;
  /**
   * The User-Agent of every request, as client-go sends one: audit logs and API priority and
   * fairness tell callers apart by it (e.g. which operator replica wrote). @default none
   */
  readonly userAgent?: string;
}

const PAGE = 500;

/** A KubeClient over the REST API, JSON and merge patches only. */
export function createKubeClient(options: KubeClientOptions): KubeClient & Required<KubePaths> {
  const conn = options.connection;
  const transport =
    options.transport ??
    (options.maxBodyBytes ? createHttpTransport({ maxBodyBytes: options.maxBodyBytes }) : httpTransport);
  const stream = options.stream ?? httpStream;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const watchSeconds = options.watchTimeoutSeconds ?? 300;
  const record = (verb: RequestRecord["verb"], resource: string, status: number, t0: number) =>
    options.onRequest?.({ verb, resource, status, durationMs: Date.now() - t0 });

  /** The request with the connection's URL and credentials (asked for every request: they rotate). */
  async function request(req: {
    method: HttpRequest["method"];
    path: string;
    body?: string;
    contentType?: string;
    timeoutMs: number;
    signal?: AbortSignal;
  }): Promise<HttpRequest> {
    const credentials = await requestCredentials(conn);
    return {
      method: req.method,
      url: apiUrl(conn, req.path),
      headers: {
        ...credentials.headers,
        accept: "application/json",
        ...(options.userAgent ? { "user-agent": options.userAgent } : {}),
        ...(req.body !== undefined ? { "content-type": req.contentType ?? "application/json" } : {}),
      },
      ...(req.body !== undefined ? { body: req.body } : {}),
      ...(credentials.tls ? { tls: credentials.tls } : {}),
      ...(req.signal ? { signal: req.signal } : {}),
      timeoutMs: req.timeoutMs,
    };
  }

  const unreachable = (e: unknown) =>
    `cannot reach the API server at ${new URL(conn.server).origin}: ${(e as Error).message}`;

  async function call(
    verb: RequestRecord["verb"],
    resource: string,
    what: string,
    req: { method: HttpRequest["method"]; path: string; body?: string; contentType?: string },
  ): Promise<{ status: number; text: string }> {
    const t0 = Date.now();
    try {
      const res = await transport(await request({ ...req, timeoutMs }));
      record(verb, resource, res.status, t0);
      return { status: res.status, text: res.body };
    } catch (e) {
      record(verb, resource, 0, t0);
      throw new KubeApiError(req.method, what, 0, "", unreachable(e), [], { cause: e });
    }
  }

  function parse<T>(
    verb: string,
    what: string,
    res: { status: number; text: string },
    ok: number[],
    byPath = false,
  ): T {
    if (!ok.includes(res.status))
      throw KubeApiError.fromResponse(verb, what, res.status, res.text, { reasonInMessage: !byPath });
    try {
      return JSON.parse(res.text) as T;
    } catch (e) {
      // Status 0: no usable answer (as when none arrived); the message keeps the HTTP status.
      throw new KubeApiError(verb, what, 0, "", `the answer is not JSON (HTTP ${res.status})`, [], {
        cause: e,
      });
    }
  }

  const success = (res: { status: number }) => (res.status >= 200 && res.status <= 299 ? [res.status] : []);

  return {
    async getPath(path: string) {
      const res = await call("GET", path.split("?")[0]!, path, { method: "GET", path });
      return parse("GET", path, res, success(res), true);
    },

    async getText(path: string) {
      const res = await call("GET", path.split("?")[0]!, path, { method: "GET", path });
      if (!success(res).length)
        throw KubeApiError.fromResponse("GET", path, res.status, res.text, { reasonInMessage: false });
      return res.text;
    },

    async postPath(path: string, body: unknown) {
      const res = await call("POST", path.split("?")[0]!, path, {
        method: "POST",
        path,
        body: JSON.stringify(body),
      });
      return parse("POST", path, res, success(res), true);
    },

    async applyPath(path: string, body: unknown, fieldManager: string) {
      const query = `?fieldManager=${encodeURIComponent(fieldManager)}&force=true`;
      const res = await call("PATCH", path.split("?")[0]!, path, {
        method: "PATCH",
        path: path + query,
        body: JSON.stringify(body),
        contentType: "application/apply-patch+yaml",
      });
      return parse("PATCH", path, res, success(res), true);
    },

    async get<T extends KubeObject>(r: Resource, ns: string | undefined, name: string) {
      const what = describeObject(r, ns, name);
      const res = await call("GET", r.plural, what, { method: "GET", path: resourcePath(r, ns, name) });
      if (res.status === 404) return undefined;
      return parse<T>("GET", what, res, [200]);
    },

    async list<T extends KubeObject>(r: Resource, ns: string | undefined) {
      const what = describeObject(r, ns);
      const items: T[] = [];
      let cont = "";
      for (;;) {
        const query = `?limit=${PAGE}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`;
        const res = await call("LIST", r.plural, what, { method: "GET", path: resourcePath(r, ns) + query });
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
        const response = await stream(
          await request({
            method: "GET",
            path: resourcePath(r, ns) + query,
            timeoutMs: (watchSeconds + 60) * 1000,
            signal,
          }),
        ).catch((e: unknown) => {
          throw new KubeApiError("WATCH", what, 0, "", unreachable(e), [], { cause: e });
        });
        status = response.status;
        if (status !== 200) {
          const lines: string[] = [];
          for await (const line of response.lines) lines.push(line);
          throw KubeApiError.fromResponse("WATCH", what, status, lines.join("\n"));
        }
        for await (const line of response.lines) {
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
        throw new KubeApiError("WATCH", what, 0, "", (e as Error).message, [], { cause: e });
      } finally {
        record("WATCH", r.plural, status, t0);
      }
    },

    async create<T extends KubeObject>(r: Resource, ns: string, body: T) {
      const what = describeObject(r, ns, body.metadata.name);
      const res = await call("CREATE", r.plural, what, {
        method: "POST",
        path: resourcePath(r, ns),
        body: JSON.stringify(body),
      });
      return parse<T>("POST", what, res, [201, 200]);
    },

    async createSubresource<T>(r: Resource, ns: string, name: string, subresource: string, body: unknown) {
      const what = `${describeObject(r, ns, name)} (${subresource})`;
      const res = await call("CREATE", `${r.plural}/${subresource}`, what, {
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
      const res = await call("PATCH", r.plural, what, {
        method: "PATCH",
        path: resourcePath(r, ns, name, subresource),
        body: JSON.stringify(patch),
        contentType: "application/merge-patch+json",
      });
      return parse<T>("PATCH", what, res, [200]);
    },

    async delete(r: Resource, ns: string, name: string, uid: string) {
      const what = describeObject(r, ns, name);
      const res = await call("DELETE", r.plural, what, {
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
