import type { KubeConnection } from "../agent/auth/kubeconfig";
import type { TlsOptions } from "./agent-client";

/** The caller's credentials for the API server: a bearer token header and/or TLS options. */
export function apiServerCredentials(conn: KubeConnection): {
  headers: Record<string, string>;
  tls?: TlsOptions;
} {
  const tls: TlsOptions = {
    ...(conn.ca ? { ca: conn.ca } : {}),
    ...(conn.cert ? { cert: conn.cert } : {}),
    ...(conn.key ? { key: conn.key } : {}),
    ...(conn.tlsServerName ? { servername: conn.tlsServerName } : {}),
    ...(conn.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
  };
  return {
    headers: conn.token ? { authorization: `Bearer ${conn.token()}` } : {},
    ...(Object.keys(tls).length ? { tls } : {}),
  };
}

/** The message of a Kubernetes Status body (`{kind: "Status", message}`), if it is one. */
export function kubeStatusMessage(json: unknown): string | undefined {
  if (typeof json !== "object" || json === null) return undefined;
  const status = json as { kind?: unknown; message?: unknown };
  return status.kind === "Status" && typeof status.message === "string" ? status.message : undefined;
}
