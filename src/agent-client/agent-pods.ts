import { z } from "zod";
import { AGENT_CONTAINER, AGENT_POD_LABELS, AGENT_PORT_NAME } from "../agent-api/pods";

/**
 * Which pod is a node's agent, and how the API server's pod proxy reaches it: pure functions over
 * the pods the API server listed (core/v1 Pod, read with zod because it comes from outside).
 */

const containerSchema = z.looseObject({
  name: z.string(),
  ports: z.array(z.looseObject({ name: z.string().optional(), containerPort: z.number() })).optional(),
  readinessProbe: z
    .looseObject({ httpGet: z.looseObject({ scheme: z.string().optional() }).optional() })
    .optional(),
});

export const podSchema = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    deletionTimestamp: z.string().optional(),
  }),
  spec: z.looseObject({ nodeName: z.string().optional(), containers: z.array(containerSchema) }),
  status: z
    .looseObject({
      phase: z.string().optional(),
      podIP: z.string().optional(),
      conditions: z
        .array(
          z.looseObject({
            type: z.string(),
            status: z.string(),
            reason: z.string().optional(),
            message: z.string().optional(),
          }),
        )
        .optional(),
    })
    .optional(),
});
export type Pod = z.infer<typeof podSchema>;

/** A node's agent pod as the pod proxy addresses it. */
export interface AgentPod {
  readonly name: string;
  /** "https" when the agent's readiness probe uses HTTPS (it serves TLS), else "http". */
  readonly scheme: "http" | "https";
  readonly port: number;
}

/**
 * The agent pod of `node` among `pods`, or why there is none that can be called: no pod on the
 * node, or none Running and Ready (the message gives each pod's phase and Ready condition), or
 * the pod declares no port. A pod being deleted is never chosen. `mayBecomeReady` when the node has an
 * agent pod that is starting or being replaced (cluster-agents.ts waits for it); not when it has
 * none, or its pod declares no port (waiting changes neither).
 */
export function agentPodOf(
  node: string,
  namespace: string,
  pods: readonly Pod[],
): { ok: true; pod: AgentPod } | { ok: false; message: string; mayBecomeReady: boolean } {
  const onNode = pods.filter((p) => p.spec.nodeName === node);
  const ready = onNode.find((p) => !p.metadata.deletionTimestamp && isRunningAndReady(p));
  if (!ready) {
    const selector = Object.entries(AGENT_POD_LABELS)
      .map(([k, v]) => `${k}=${v}`)
      .join(",");
    return {
      ok: false,
      mayBecomeReady: onNode.length > 0,
      message: onNode.length
        ? `node ${node}: no agent pod on it is Running and Ready: ${onNode.map((p) => `${namespace}/${p.metadata.name} (${podState(p)})`).join(", ")}`
        : `node ${node}: no agent pod (${selector} in namespace ${namespace}) runs on it; check the agent DaemonSet's nodeSelector and tolerations`,
    };
  }
  const container = ready.spec.containers.find((c) => c.name === AGENT_CONTAINER) ?? ready.spec.containers[0];
  const port = container?.ports?.find((p) => p.name === AGENT_PORT_NAME) ?? container?.ports?.[0];
  if (!container || !port)
    return {
      ok: false,
      mayBecomeReady: false,
      message: `node ${node}: its agent pod ${namespace}/${ready.metadata.name} declares no container port`,
    };
  return {
    ok: true,
    pod: {
      name: ready.metadata.name,
      scheme: container.readinessProbe?.httpGet?.scheme?.toUpperCase() === "HTTPS" ? "https" : "http",
      port: port.containerPort,
    },
  };
}

/** The pod proxy path of an agent pod: `/api/v1/namespaces/<ns>/pods/<scheme>:<pod>:<port>/proxy/`. */
export function podProxyPath(namespace: string, pod: AgentPod): string {
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${pod.scheme}:${encodeURIComponent(pod.name)}:${pod.port}/proxy/`;
}

function isRunningAndReady(pod: Pod): boolean {
  return (
    pod.status?.phase === "Running" &&
    !!pod.status.podIP &&
    (pod.status.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/** "phase Pending, Ready False: ContainersNotReady", for the error of a node whose agent is not ready. */
function podState(pod: Pod): string {
  if (pod.metadata.deletionTimestamp) return "being deleted";
  const ready = (pod.status?.conditions ?? []).find((c) => c.type === "Ready");
  const readyText = ready
    ? `Ready ${ready.status}${ready.reason ? `: ${ready.reason}` : ""}${ready.message ? ` (${ready.message})` : ""}`
    : "no Ready condition";
  const ip = pod.status?.phase === "Running" && !pod.status.podIP ? ", no pod IP" : "";
  return `phase ${pod.status?.phase ?? "unknown"}, ${readyText}${ip}`;
}
