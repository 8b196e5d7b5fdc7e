import type { IncomingHttpHeaders } from "node:http";

/**
 * The header that carries the agent token through the API server's pod proxy. The API server's
 * authentication filter removes the `Authorization` header of every request it authenticated
 * (it held the caller's own credentials), so a token for the agent cannot travel there; this
 * header reaches the agent unchanged. The token in it is checked exactly like one in
 * `Authorization` (TokenReview for our audience, then SubjectAccessReview).
 */
export const PROXY_AUTHORIZATION_HEADER = "x-pulumi-lvm-authorization";

/**
 * The credentials of a request: its `Authorization` header, or, only when that is absent,
 * `X-Pulumi-Lvm-Authorization`. Never both: a request that has an `Authorization` header is
 * judged by it alone.
 */
export function requestCredentials(headers: IncomingHttpHeaders): string | undefined {
  if (headers.authorization !== undefined) return headers.authorization;
  const proxied = headers[PROXY_AUTHORIZATION_HEADER];
  // Node joins a repeated custom header with ", ", which no bearer token matches: refused as malformed.
  return Array.isArray(proxied) ? proxied.join(", ") : proxied;
}
