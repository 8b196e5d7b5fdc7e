import type { KubeConnection } from "../../../src/agent/auth/kubeconfig";
import type { Transport } from "../../../src/agent-client/agent-client";
import { apiServerCredentials, kubeStatusMessage } from "../../../src/agent-client/api-server";

/** The Kubernetes API answered with an error, or could not be reached (status 0). */
export class KubeApiError extends Error {
  constructor(
    /** HTTP status, or 0 when the API server was not reached. */
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }
}

/** The few Kubernetes API calls cluster mode makes, as the kubeconfig's user, over a Transport. */
export interface KubeApi {
  get(path: string): Promise<unknown>;
  post(path: string, body: unknown): Promise<unknown>;
}

/** How long one API call may take. */
export const KUBE_API_TIMEOUT_MS = 30_000;

export function kubeApi(conn: KubeConnection, transport: Transport): KubeApi {
  const call = async (method: "GET" | "POST", path: string, body?: unknown): Promise<unknown> => {
    const url = apiUrl(conn, path);
    const credentials = apiServerCredentials(conn);
    let response: { status: number; body: string };
    try {
      response = await transport({
        method,
        url,
        headers: {
          ...credentials.headers,
          accept: "application/json",
          ...(body === undefined ? {} : { "content-type": "application/json" }),
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        ...(credentials.tls ? { tls: credentials.tls } : {}),
        timeoutMs: KUBE_API_TIMEOUT_MS,
      });
    } catch (e) {
      throw new KubeApiError(0, `cannot reach the API server at ${url.origin}: ${(e as Error).message}`);
    }
    const json = parseJson(response.body);
    if (response.status < 200 || response.status > 299) {
      const message = kubeStatusMessage(json);
      throw new KubeApiError(
        response.status,
        `${method} ${path}: HTTP ${response.status}${message ? `: ${message}` : ""}`,
      );
    }
    if (json === undefined)
      throw new KubeApiError(response.status, `${method} ${path}: the answer is not JSON`);
    return json;
  };
  return { get: (path) => call("GET", path), post: (path, body) => call("POST", path, body) };
}

/** `path` on the API server, keeping a path prefix of the server URL (e.g. Rancher's /k8s/clusters/<id>). */
export function apiUrl(conn: KubeConnection, path: string): URL {
  const url = new URL(conn.server);
  const [pathname = "", query] = path.split("?", 2);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${pathname.replace(/^\/+/, "")}`;
  url.search = query ?? "";
  return url;
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
