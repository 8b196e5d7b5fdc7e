/**
 * Agent pods as API objects, as the agents' DaemonSet makes them (labels, container "agent", port
 * "http"), for operator tests and benchmarks without a kubelet: their status is written here as a
 * kubelet would report it, Running at 127.0.0.1, where each node's agent (or stand-in) listens.
 */
import type { ControlPlane } from "../env/cluster";
import { reportPodStatus } from "../env/kubelet-stand-in";
import { AGENT_NAMESPACE, must } from "./env";

export const AGENT_SERVICE_ACCOUNT = "pulumi-lvm-agent";

/** The pod name of `node`'s agent. */
export const agentPodName = (node: string) => `agent-${node}`;

/** The agents' ServiceAccount in AGENT_NAMESPACE, which their pods name. */
export async function createAgentServiceAccount(cp: ControlPlane): Promise<void> {
  await must(cp, "POST", `/api/v1/namespaces/${AGENT_NAMESPACE}/serviceaccounts`, {
    metadata: { name: AGENT_SERVICE_ACCOUNT },
  });
}

export interface AgentPodOptions {
  /** The container's image: says what answers at the port. @default "pulumi-lvm-agent:test" */
  readonly image?: string;
  /** Delete a pod of that name first (a new agent for the node). @default false */
  readonly replace?: boolean;
}

/** `node`'s agent pod, Running and Ready at 127.0.0.1:`port`. */
export async function createAgentPod(
  cp: ControlPlane,
  node: string,
  port: number,
  { image = "pulumi-lvm-agent:test", replace = false }: AgentPodOptions = {},
): Promise<void> {
  const name = agentPodName(node);
  if (replace)
    await cp.request("DELETE", `/api/v1/namespaces/${AGENT_NAMESPACE}/pods/${name}?gracePeriodSeconds=0`);
  await must(cp, "POST", `/api/v1/namespaces/${AGENT_NAMESPACE}/pods`, {
    metadata: { name, labels: { "app.kubernetes.io/name": "pulumi-lvm-agent" } },
    spec: {
      nodeName: node,
      serviceAccountName: AGENT_SERVICE_ACCOUNT,
      automountServiceAccountToken: false,
      containers: [{ name: "agent", image, ports: [{ name: "http", containerPort: port }] }],
    },
  });
  await setAgentPodReady(cp, node, true);
}

/** The agent pod's status as a kubelet would report it: Running at 127.0.0.1, Ready or not. */
export async function setAgentPodReady(cp: ControlPlane, node: string, ready: boolean): Promise<void> {
  await reportPodStatus(cp, { namespace: AGENT_NAMESPACE, name: agentPodName(node), ip: "127.0.0.1", ready });
}

/**
 * Registers each of `nodes`: its Node object with its labels, then its agent pod at `portOf(node)`,
 * `concurrency` nodes at a time.
 */
export async function registerAgentNodes(
  cp: ControlPlane,
  nodes: readonly string[],
  o: {
    readonly portOf: (node: string) => number;
    readonly labelsOf: (node: string) => Record<string, string>;
    readonly image?: string;
    /** @default 1 */
    readonly concurrency?: number;
  },
): Promise<void> {
  const queue = [...nodes];
  await Promise.all(
    Array.from({ length: o.concurrency ?? 1 }, async () => {
      for (let node = queue.shift(); node !== undefined; node = queue.shift()) {
        await cp.createNode(node, o.labelsOf(node));
        await createAgentPod(cp, node, o.portOf(node), o.image ? { image: o.image } : {});
      }
    }),
  );
}
