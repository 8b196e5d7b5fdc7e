/**
 * How callers and agents prove who they are to each other: shared by the agent, its clients (the
 * operator, the provider) and the components that deploy them (no server internals).
 *
 * - Tokens: a caller asks the API server (TokenRequest) for a short-lived service-account token whose
 *   audience names the node, `pulumi-lvm-agent/<node>`. Each agent's TokenReview accepts only its own
 *   node's audience, so a token that one agent (or whoever owns its node) sees is refused by every
 *   other agent. Through the API server's pod proxy the token travels in PROXY_AUTHORIZATION_HEADER.
 * - TLS: the agents serve a certificate for the fixed name `pulumi-lvm-agent`, signed by the agents'
 *   own CA; the operator verifies that name against that CA only (never the system roots). Agents
 *   are reached at pod IPs, which no certificate can name.
 */

/** The agents' audience prefix (and the audience of older, cluster-wide tokens a static sandbox token may carry). */
export const AGENT_AUDIENCE = "pulumi-lvm-agent";

/** The only audience node `node`'s agent accepts by default. @example nodeAudience("n1") // "pulumi-lvm-agent/n1" */
export function nodeAudience(node: string): string {
  return `${AGENT_AUDIENCE}/${node}`;
}

/**
 * The header that carries the agent token through the API server's pod proxy. The API server's
 * authentication filter removes the `Authorization` header of every request it authenticated
 * (it held the caller's own credentials), so a token for the agent cannot travel there; this
 * header reaches the agent unchanged. The token in it is checked exactly like one in
 * `Authorization` (TokenReview for our audience, then SubjectAccessReview).
 */
export const PROXY_AUTHORIZATION_HEADER = "x-pulumi-lvm-authorization";

/** The DNS name in every agent's serving certificate, which callers verify. */
export const AGENT_SERVER_NAME = "pulumi-lvm-agent";

/**
 * Where the agents' CA certificate is mounted in the operator's pod (LvmSystem's operator workload
 * mounts it there), and the operator's default `--agent-ca-file`.
 */
export const DEFAULT_AGENT_CA_FILE = "/var/run/secrets/pulumi-lvm/agent-ca/ca.crt";
