import type { IncomingHttpHeaders } from "node:http";

import { PROXY_AUTHORIZATION_HEADER } from "../../agent-api/auth";

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
