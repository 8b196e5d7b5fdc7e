import * as http from "node:http";
import * as https from "node:https";
import * as readline from "node:readline";
import type { KubeConnection } from "./connection";

/** One request to the API server. */
export interface HttpRequest {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Path and query, e.g. "/api/v1/nodes?limit=500". */
  readonly path: string;
  readonly body?: string;
  /** @default "application/json" */
  readonly contentType?: string;
  /** For a plain request: the whole exchange; for a stream: the longest silence. */
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
}

/** A response read to the end. */
export interface HttpResponse {
  readonly status: number;
  readonly text: string;
}

/** A response whose body is read line by line (a watch). */
export interface HttpStream {
  readonly status: number;
  /** The body's lines, until the server or the signal ends it. */
  readonly lines: AsyncIterable<string>;
}

/**
 * How the client talks HTTP: the real one below, or a test's. Rejects only when no response
 * arrived (connection refused, reset, timeout, aborted).
 */
export interface Transport {
  send(conn: KubeConnection, req: HttpRequest): Promise<HttpResponse>;
  stream(conn: KubeConnection, req: HttpRequest): Promise<HttpStream>;
}

/** Responses larger than this are refused: the operator reads lists of nodes and LVMNodes, not logs. */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** HTTP(S) with node:http, reading token and CA from the connection for every request. */
export const httpTransport: Transport = {
  async send(conn, req) {
    const res = await open(conn, req);
    return new Promise<HttpResponse>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > MAX_BODY_BYTES) res.destroy(new Error(`response larger than ${MAX_BODY_BYTES} bytes`));
        else chunks.push(c);
      });
      res.on("error", reject);
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
    });
  },
  async stream(conn, req) {
    const res = await open(conn, req, true);
    const lines = readline.createInterface({ input: res, crlfDelay: Infinity });
    res.on("error", () => lines.close());
    return { status: res.statusCode ?? 0, lines };
  },
};

function open(conn: KubeConnection, req: HttpRequest, streaming = false): Promise<http.IncomingMessage> {
  const url = new URL(req.path, conn.server);
  const mod = url.protocol === "http:" ? http : https;
  const ca = conn.ca();
  return new Promise((resolve, reject) => {
    if (req.signal?.aborted) return reject(new Error("aborted"));
    const r = mod.request(
      url,
      {
        method: req.method,
        ...(ca ? { ca } : {}),
        headers: {
          accept: "application/json",
          authorization: `Bearer ${conn.token()}`,
          ...(req.body !== undefined
            ? {
                "content-type": req.contentType ?? "application/json",
                "content-length": Buffer.byteLength(req.body),
              }
            : {}),
        },
        ...(req.signal ? { signal: req.signal } : {}),
      },
      resolve,
    );
    // A plain request must finish in time; a stream must not go silent longer (bookmarks arrive
    // about once a minute, and the server ends the watch itself after timeoutSeconds).
    r.setTimeout(req.timeoutMs, () =>
      r.destroy(new Error(`no ${streaming ? "data" : "answer"} in ${req.timeoutMs} ms`)),
    );
    r.on("error", reject);
    r.end(req.body);
  });
}
