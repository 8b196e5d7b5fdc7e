import * as http from "node:http";
import * as https from "node:https";
import type { AuthOutcome } from "./auth/authorizer";
import { requestCredentials } from "./auth/request-credentials";
import { parseTarget, TARGET_HEADER, targetMismatch } from "../agent-api/target";
import { AgentError, errorBody } from "./errors";
import { DEFAULT_BODY_LIMIT, readJsonBody } from "./http/body";
import type { AgentMetrics } from "./metrics";
import type { Reply, Route } from "./routes/route";

export interface AgentServerOptions {
  readonly routes: readonly Route[];
  /**
   * Checks the credentials of every authenticated route, before its body is read: the Authorization
   * header, or X-Pulumi-Lvm-Authorization when it is absent (auth/request-credentials.ts).
   */
  readonly authorize: (authorization: string | undefined) => Promise<AuthOutcome>;
  readonly metrics: AgentMetrics;
  /**
   * The node this agent serves and the namespace of its LVMNodes ("" = any): a /v1 call whose
   * X-Pulumi-Lvm-Target names another node or namespace is refused (403) before anything else
   * (src/agent-api/target.ts). @default no check
   */
  readonly serves?: { readonly node: string; readonly namespace: string };
  /** Largest request body accepted. @default 1 MiB */
  readonly bodyLimitBytes?: number;
  /**
   * PEM certificate and key: serve HTTPS (TLS_OPTIONS); both absent: HTTPS with no certificate yet
   * (every handshake fails until one is set). @default plain HTTP. To follow files that are replaced
   * (a rotated Secret) or not there yet, see followServingCertificate (src/kube/serving-certificate.ts).
   */
  readonly tls?: { readonly cert?: string | Buffer; readonly key?: string | Buffer };
  /** Receives one entry per request (and per internal error). */
  readonly log?: (entry: Record<string, unknown>) => void;
}

/** The realm in WWW-Authenticate. */
export const AUTH_REALM = "pulumi-lvm-agent";

/** The TLS settings of the agent's HTTPS server besides its certificate. */
export const TLS_OPTIONS = { minVersion: "TLSv1.2" } as const;

/**
 * The agent's HTTP(S) server: routes requests, authenticates and authorizes every /v1 call before
 * reading its body, validates bodies at the edge, and answers errors as JSON with a stable code.
 */
export function createAgentServer(options: AgentServerOptions): http.Server {
  const limit = options.bodyLimitBytes ?? DEFAULT_BODY_LIMIT;
  const byPath = new Map<string, Route[]>();
  for (const r of options.routes) byPath.set(r.path, [...(byPath.get(r.path) ?? []), r]);

  const handler = (req: http.IncomingMessage, res: http.ServerResponse) => {
    try {
      handle(req, res);
    } catch (e) {
      // Never let one request take the process (and a running apply) down.
      options.metrics.errors.inc({ kind: "internal" });
      options.log?.({ msg: "internal error", error: e instanceof Error ? e.stack : String(e) });
      if (!res.headersSent)
        send(
          res,
          { status: 500, json: errorBody(new AgentError(500, "Internal", "internal error")) },
          {
            connection: "close",
          },
        );
    }
  };

  const handle = (req: http.IncomingMessage, res: http.ServerResponse) => {
    const started = Date.now();
    let url: URL;
    try {
      url = new URL(req.url ?? "/", "http://agent");
    } catch {
      url = new URL("http://agent/");
      options.metrics.requests.inc({ route: "unmatched", method: req.method ?? "", code: "400" });
      options.log?.({ msg: "request", method: req.method, path: String(req.url).slice(0, 200), status: 400 });
      send(
        res,
        {
          status: 400,
          json: errorBody(new AgentError(400, "BadRequest", "the request target is not a valid URL path")),
        },
        req.readableEnded ? {} : { connection: "close" },
      );
      return;
    }
    const candidates = byPath.get(url.pathname);
    const r = candidates?.find((c) => c.method === req.method);
    const routeLabel = candidates ? url.pathname : "unmatched";
    let user: string | undefined;
    const finish = (reply: Reply, extraHeaders: Record<string, string> = {}) => {
      options.metrics.requests.inc({
        route: routeLabel,
        method: req.method ?? "",
        code: String(reply.status),
      });
      options.log?.({
        msg: "request",
        method: req.method,
        path: url.pathname,
        status: reply.status,
        ms: Date.now() - started,
        ...(user ? { user } : {}),
      });
      send(res, reply, extraHeaders);
    };
    const fail = (e: unknown) => {
      const err =
        e instanceof AgentError
          ? e
          : new AgentError(500, "Internal", `internal error: ${e instanceof Error ? e.message : String(e)}`);
      if (!(e instanceof AgentError)) {
        options.metrics.errors.inc({ kind: "internal" });
        options.log?.({
          msg: "internal error",
          path: url.pathname,
          error: e instanceof Error ? e.stack : String(e),
        });
      }
      const headers: Record<string, string> = {};
      if (err.status === 401) headers["www-authenticate"] = `Bearer realm="${AUTH_REALM}"`;
      // A body we did not read (refused before or while reading it) is not drained: the connection closes.
      if (
        !req.readableEnded &&
        (err.status === 413 ||
          req.headers["content-length"] !== undefined ||
          req.headers["transfer-encoding"] !== undefined)
      )
        headers.connection = "close";
      finish({ status: err.status, json: errorBody(err) }, headers);
    };
    if (!candidates) return fail(new AgentError(404, "NotFound", `no route ${url.pathname}`));
    if (!r)
      return fail(
        new AgentError(405, "MethodNotAllowed", `${req.method} is not allowed on ${url.pathname}`, {
          allow: candidates.map((c) => c.method),
        }),
      );

    void (async () => {
      if (r.authenticated && options.serves) {
        const target = parseTarget(req.headers[TARGET_HEADER]);
        if (target && "error" in target) throw new AgentError(400, "InvalidTarget", target.error);
        const mismatch = target && targetMismatch(target, options.serves.node, options.serves.namespace);
        if (mismatch) {
          options.metrics.errors.inc({ kind: "auth" });
          throw new AgentError(403, "WrongNode", mismatch);
        }
      }
      if (r.authenticated) {
        const outcome = await options.authorize(requestCredentials(req.headers));
        if (!outcome.ok) {
          options.metrics.errors.inc({ kind: "auth" });
          if (outcome.detail)
            options.log?.({ msg: "cannot reach the API server to check credentials", error: outcome.detail });
          const code =
            outcome.status === 401
              ? "Unauthorized"
              : outcome.status === 403
                ? "Forbidden"
                : "AuthUnavailable";
          throw new AgentError(outcome.status, code, outcome.message);
        }
        user = outcome.user.username;
      }
      const body = r.body ? await readJsonBody(req, r.body, limit) : undefined;
      return r.handle(body);
    })().then(
      (reply) => finish(reply),
      (e) => fail(e),
    );
  };

  const server = options.tls
    ? https.createServer({ ...TLS_OPTIONS, ...options.tls }, handler)
    : http.createServer(handler);
  // Requests Node's parser rejects (malformed request line or headers, headers too large, a
  // timeout) get the same JSON error shape as every other error; the connection is closed.
  server.on("clientError", (err: NodeJS.ErrnoException, socket: import("node:stream").Duplex) => {
    if (!socket.writable || (err.code === "ECONNRESET" && !socket.readable)) {
      socket.destroy();
      return;
    }
    const [status, code, reason, message] =
      err.code === "HPE_HEADER_OVERFLOW"
        ? [431, "HeadersTooLarge", "Request Header Fields Too Large", "the request headers are too large"]
        : err.code === "ERR_HTTP_REQUEST_TIMEOUT"
          ? [408, "RequestTimeout", "Request Timeout", "the request did not arrive in time"]
          : [400, "BadRequest", "Bad Request", "the request is not valid HTTP/1.1"];
    options.metrics.requests.inc({ route: "unmatched", method: "", code: String(status) });
    options.log?.({ msg: "request refused by the HTTP parser", status, error: err.code ?? err.message });
    const body = `${JSON.stringify(errorBody(new AgentError(status, code, message)), null, 2)}\n`;
    socket.end(
      `HTTP/1.1 ${status} ${reason}\r\ncontent-type: application/json; charset=utf-8\r\ncontent-length: ${Buffer.byteLength(body)}\r\ncache-control: no-store\r\nx-content-type-options: nosniff\r\nconnection: close\r\n\r\n${body}`,
    );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 60_000;
  server.keepAliveTimeout = 5_000;
  return server;
}

function send(res: http.ServerResponse, reply: Reply, extraHeaders: Record<string, string>): void {
  const common = { "cache-control": "no-store", "x-content-type-options": "nosniff", ...extraHeaders };
  if ("text" in reply) {
    res.writeHead(reply.status, {
      ...common,
      "content-type": reply.contentType,
      "content-length": String(Buffer.byteLength(reply.text)),
    });
    res.end(reply.text);
    return;
  }
  const text = `${JSON.stringify(reply.json, null, 2)}\n`;
  res.writeHead(reply.status, {
    ...common,
    ...reply.headers,
    "content-type": "application/json; charset=utf-8",
    "content-length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}
