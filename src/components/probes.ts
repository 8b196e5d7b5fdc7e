/**
 * The agent's and the operator's health probes: one policy for both, because both run node on the
 * storage nodes' CPUs (an edge board, a node busy starting TopoLVM's containers).
 *
 * - startup: up to 10 minutes before the first answer (node loading the program on a slow node);
 * - liveness: killed only after 3 minutes without an answer. A kill is not free: the agent may be
 *   in the middle of an lvm command (its journal makes the re-run safe, but the node then pays a
 *   restart), and each restart loads node again on the same busy CPUs. On a qemu-emulated node
 *   the former 60 s killed an agent that was answering a plan request, and the restarts fed the
 *   load that caused them until every pod on the node was restarting;
 * - readiness: 30 s without an answer takes the pod out of its Service.
 *
 * Fewer probes also means fewer TLS handshakes on the node (the agent serves HTTPS).
 */
export interface HttpProbes {
  readonly startupProbe: Probe;
  readonly livenessProbe: Probe;
  readonly readinessProbe: Probe;
}

export interface Probe {
  readonly httpGet: { readonly path: string; readonly port: string; readonly scheme?: "HTTP" | "HTTPS" };
  readonly periodSeconds: number;
  readonly timeoutSeconds: number;
  readonly failureThreshold: number;
}

/** The three probes on port `http`: `/healthz` for startup and liveness, `/readyz` for readiness. */
export function httpProbes(scheme?: "HTTP" | "HTTPS"): HttpProbes {
  const get = (path: string) => ({ path, port: "http", ...(scheme ? { scheme } : {}) });
  return {
    startupProbe: { httpGet: get("/healthz"), periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 60 },
    livenessProbe: { httpGet: get("/healthz"), periodSeconds: 30, timeoutSeconds: 15, failureThreshold: 6 },
    readinessProbe: { httpGet: get("/readyz"), periodSeconds: 10, timeoutSeconds: 10, failureThreshold: 3 },
  };
}
