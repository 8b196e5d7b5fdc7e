/**
 * How the operator and the provider prove to one node's agent that a call is for it, and how they
 * know they reached an agent: shared by the agent and its clients.
 *
 * - Tokens: a caller asks the API server (TokenRequest) for a short-lived service-account token whose
 *   audience names the node, `pulumi-lvm-agent/<node>`. Each agent's TokenReview accepts only its own
 *   node's audience, so a token that one agent (or whoever owns its node) sees is refused by every
 *   other agent.
 * - TLS: the agents serve a certificate for the fixed name `pulumi-lvm-agent`, signed by the agents'
 *   own CA; the operator verifies that name against that CA only (never the system roots). Agents
 *   are reached at pod IPs, which no certificate can name.
 */

/** The agents' audience prefix (and the audience of older, cluster-wide tokens). */
export const AGENT_AUDIENCE = "pulumi-lvm-agent";

/** The only audience node `node`'s agent accepts by default. @example nodeAudience("n1") // "pulumi-lvm-agent/n1" */
export function nodeAudience(node: string): string {
  return `${AGENT_AUDIENCE}/${node}`;
}

/** The DNS name in every agent's serving certificate, which callers verify. */
export const AGENT_SERVER_NAME = "pulumi-lvm-agent";
