/**
 * Secrets kept out of the logs: the value of any field named like a credential (`token`,
 * `accessToken`, `authorization`, `cookie`, `password`, at any depth), and bearer tokens and JWTs
 * inside any string (an error message quoting a header or a URL with a token).
 */

export const REDACTED = "[redacted]";

const SECRET_KEY = /(token|authorization|cookie|password|secret)$/i;
const BEARER = /\b(bearer)\s+[A-Za-z0-9._~+/=-]+/gi;
/** header.payload.signature, each base64url; a JWT's header always starts `eyJ` (`{"`). */
const JWT = /\beyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;

/** A copy of `value` with secrets replaced by "[redacted]"; anything else as it was. */
export function redactSecrets(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return value.replace(BEARER, `$1 ${REDACTED}`).replace(JWT, REDACTED);
  if (depth > 20 || value === null || typeof value !== "object") return value;
  if (Array.isArray(value)) return value.map((v) => redactSecrets(v, depth + 1));
  if (value instanceof Error) return redactSecrets({ name: value.name, message: value.message }, depth + 1);
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      SECRET_KEY.test(k) && v !== undefined && v !== null ? REDACTED : redactSecrets(v, depth + 1),
    ]),
  );
}
