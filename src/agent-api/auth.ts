/**
 * How a caller authenticates to an agent: shared by the agent, its clients (the operator, the
 * provider) and the components that deploy them (no server internals).
 */

import { AGENT_AUDIENCE } from "./identity";

/**
 * The agents' audience prefix (src/agent-api/identity.ts): an agent accepts `nodeAudience(node)`
 * by default; a static sandbox token may carry this cluster-wide audience.
 */
export const DEFAULT_AUDIENCE = AGENT_AUDIENCE;

/**
 * The header that carries the agent token through the API server's pod proxy. The API server's
 * authentication filter removes the `Authorization` header of every request it authenticated
 * (it held the caller's own credentials), so a token for the agent cannot travel there; this
 * header reaches the agent unchanged. The token in it is checked exactly like one in
 * `Authorization` (TokenReview for our audience, then SubjectAccessReview).
 */
export const PROXY_AUTHORIZATION_HEADER = "x-pulumi-lvm-authorization";

/** Where the operator's projected token for the agents is mounted by default (docs/operator.md shows the volume). */
export const DEFAULT_AGENT_TOKEN_FILE = "/var/run/secrets/pulumi-lvm/agent-token/token";
