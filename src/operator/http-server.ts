import * as http from "node:http";
import { EXPOSITION_CONTENT_TYPE } from "../metrics/prometheus";

export interface ProbeServerOptions {
  /** undefined when ready; otherwise why not. */
  readonly notReady: () => string | undefined;
  /** The Prometheus exposition text. */
  readonly metrics: () => Promise<string>;
}

/**
 * `/healthz` (the process answers), `/readyz` (caches synced, workers running, not stopping) and
 * `/metrics`; plain HTTP, no authentication, GET only: probes and scrapes, nothing that changes state.
 */
export function createProbeServer(options: ProbeServerOptions): http.Server {
  return http.createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    const send = (status: number, text: string, type = "text/plain; charset=utf-8") => {
      res.writeHead(status, { "content-type": type, "content-length": Buffer.byteLength(text) });
      res.end(req.method === "HEAD" ? undefined : text);
    };
    if (req.method !== "GET" && req.method !== "HEAD") return send(405, "method not allowed\n");
    if (path === "/healthz") return send(200, "ok\n");
    if (path === "/readyz") {
      const reason = options.notReady();
      return reason ? send(503, `not ready: ${reason}\n`) : send(200, "ok\n");
    }
    if (path === "/metrics")
      return void options.metrics().then(
        (text) => send(200, text, EXPOSITION_CONTENT_TYPE),
        (e: unknown) => send(500, `metrics: ${e instanceof Error ? e.message : String(e)}\n`),
      );
    return send(404, "not found\n");
  });
}
