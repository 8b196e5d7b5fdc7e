import * as http from "node:http";
import * as https from "node:https";

/** What a test got back from the agent's HTTP API. */
export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field
}

/** One HTTP(S) request to `url` + `urlPath`; `body` is sent as JSON, `raw` as it is. */
export function request(
  url: string,
  method: string,
  urlPath: string,
  opts: {
    token?: string;
    body?: unknown;
    raw?: string | Buffer;
    headers?: Record<string, string>;
    /** Content-Type of a body. @default "application/json" */
    contentType?: string;
    ca?: string;
    /** Give up (reject) when no complete answer came within this long. @default no limit */
    timeoutMs?: number;
  } = {},
): Promise<Res> {
  const payload = opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body));
  const mod = url.startsWith("https:") ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(`${url}${urlPath}`, {
      method,
      ...(opts.ca ? { ca: opts.ca } : {}),
      headers: {
        ...(opts.token ? { authorization: `Bearer ${opts.token}` } : {}),
        ...(payload !== undefined
          ? {
              "content-type": opts.contentType ?? "application/json",
              "content-length": String(Buffer.byteLength(payload)),
            }
          : {}),
        ...opts.headers,
      },
    });
    req.on("response", (res) => {
      let text = "";
      res.on("data", (c) => (text += c));
      res.on("end", () => {
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    if (opts.timeoutMs !== undefined)
      req.setTimeout(opts.timeoutMs, () =>
        req.destroy(new Error(`${method} ${urlPath}: no answer within ${opts.timeoutMs} ms`)),
      );
    req.on("error", reject);
    req.end(payload);
  });
}
