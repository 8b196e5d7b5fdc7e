import * as http from "node:http";
import * as https from "node:https";
import * as readline from "node:readline";

/** TLS options of one request (node:https). */
export interface TlsOptions {
  readonly ca?: string;
  readonly cert?: string;
  readonly key?: string;
  readonly servername?: string;
  readonly rejectUnauthorized?: boolean;
}

/** One HTTP exchange. */
export interface HttpRequest {
  readonly method: "GET" | "POST" | "PATCH" | "DELETE";
  readonly url: URL;
  readonly headers: Readonly<Record<string, string>>;
  readonly body?: string;
  /** A plain request: the longest silence before it fails; a stream: the same, between lines. */
  readonly timeoutMs: number;
  readonly tls?: TlsOptions;
  /** Ends the request when aborted (the transport rejects). */
  readonly signal?: AbortSignal;
}

/** A response read to the end. */
export interface HttpResponse {
  readonly status: number;
  readonly body: string;
}

/**
 * One HTTP exchange: the real one below, or a test's. Rejects only when no response arrived
 * (connection refused, reset, timeout, aborted, a response over the size limit).
 */
export type Transport = (request: HttpRequest) => Promise<HttpResponse>;

/** A response whose body is read line by line (a watch). */
export interface HttpStream {
  readonly status: number;
  /** The body's lines, until the server or the signal ends it. */
  readonly lines: AsyncIterable<string>;
}

export type StreamTransport = (request: HttpRequest) => Promise<HttpStream>;

export interface HttpTransportOptions {
  /**
   * Responses larger than this are refused: the clients read lists of nodes and LVMNodes, plans
   * and reviews, not logs. @default 67108864 (64 MiB)
   */
  readonly maxBodyBytes?: number;
}

export const DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024;

/**
 * HTTP(S) with node:http, the one wrapper every client here uses (the API server and the agents).
 * node:http rather than fetch: fetch (undici) gives up on a response after 300 s of silence, and an
 * apply that moves extents may take hours.
 */
export function createHttpTransport(options: HttpTransportOptions = {}): Transport {
  const limit = options.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES;
  return async (request) => {
    const res = await open(request, false);
    return new Promise<HttpResponse>((resolve, reject) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size > limit) res.destroy(new Error(`response larger than ${limit} bytes`));
        else chunks.push(c);
      });
      res.on("error", reject);
      res.on("end", () =>
        resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
      );
    });
  };
}

/** The transport with the default response limit. */
export const httpTransport: Transport = createHttpTransport();

/** A streamed response (a watch), its body line by line. */
export const httpStream: StreamTransport = async (request) => {
  const res = await open(request, true);
  const lines = readline.createInterface({ input: res, crlfDelay: Infinity });
  res.on("error", () => lines.close());
  return { status: res.statusCode ?? 0, lines };
};

function open(request: HttpRequest, streaming: boolean): Promise<http.IncomingMessage> {
  const client = request.url.protocol === "https:" ? https : http;
  return new Promise((resolve, reject) => {
    if (request.signal?.aborted) return reject(new Error("aborted"));
    const req = client.request(
      request.url,
      {
        method: request.method,
        headers: {
          ...request.headers,
          ...(request.body !== undefined
            ? { "content-length": String(Buffer.byteLength(request.body)) }
            : {}),
        },
        ...(request.signal ? { signal: request.signal } : {}),
        ...request.tls,
      },
      resolve,
    );
    // TCP keepalive: a peer that lost power (no FIN, no RST) ends a long request in minutes, not at
    // its idle timeout (probes after 30 s idle, then the kernel's interval and count).
    req.on("socket", (socket) => socket.setKeepAlive(true, 30_000));
    // A plain request must not go silent longer; a stream neither (bookmarks arrive about once a
    // minute, and the server ends a watch itself after timeoutSeconds).
    req.setTimeout(request.timeoutMs, () =>
      req.destroy(
        new Error(
          streaming
            ? `no data in ${request.timeoutMs} ms`
            : `no answer within ${Math.round(request.timeoutMs / 1000)} s`,
        ),
      ),
    );
    req.on("error", reject);
    req.end(request.body);
  });
}
