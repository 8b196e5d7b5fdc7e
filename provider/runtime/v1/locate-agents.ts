import type { Transport } from "../../../src/kube/http";
import { findClusterAgents, type LocatedAgents, type ReadyWait } from "./cluster-agents";
import type { Inputs } from "./state";

/** Finds the agents of `nodes`, or of every node of the node set now. */
export type Locate = (inputs: Inputs, nodes?: readonly string[]) => Promise<LocatedAgents>;

/**
 * Where a node set's agents are: in sandbox mode the `agents` map (node → URL and token, called
 * directly); in cluster mode the agent DaemonSet's pods, called through the API server's pod proxy
 * with a token requested now (cluster-agents.ts). Sorted by node.
 */
export async function locateAgents(
  transport: Transport,
  inputs: Inputs,
  nodes?: readonly string[],
  readyWait?: ReadyWait,
): Promise<LocatedAgents> {
  if (inputs.cluster) return findClusterAgents(transport, inputs.namespace, inputs.cluster, nodes, readyWait);
  const wanted = nodes ? new Set(nodes) : undefined;
  const endpoints = Object.entries(inputs.agents ?? {})
    .filter(([node]) => !wanted || wanted.has(node))
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([node, agent]) => ({
      node,
      url: agent.url,
      token: agent.token,
      ...(agent.ca ? { ca: agent.ca } : {}),
    }));
  return { endpoints, missing: [] };
}
