/**
 * What the support bundle removes before anything is written, so that a bundle can be attached to
 * a public bug report. Secrets are never fetched; these rules cover what could still carry one:
 *
 * - in objects: the value of every field whose name says it holds a credential (token, password,
 *   secret, bearer, credential, private/client/TLS/API/access key, key data, ca.crt; not a field
 *   ending in "name" or "ref", e.g. secretName, which names a Secret), every container env var's
 *   `value` (names and valueFrom references stay), the annotation
 *   kubectl.kubernetes.io/last-applied-configuration, and managedFields (noise);
 * - in every string and every text (logs, error messages): PEM private keys, JWTs (three base64url
 *   segments starting "eyJ": service account tokens), `Bearer <value>`, and the credentials of the
 *   user's own kubeconfig, literally and base64-encoded.
 */
export const REDACTED = "<redacted>";

/** Field names (lowercase, without "-", "_", ".") whose values are credentials. */
const SECRET_FIELD =
  /token|password|passwd|secret|bearer|credential|privatekey|clientkey|tlskey|apikey|accesskey|keydata|cacrt/;
/** Field names that name or point to a credential rather than hold one. */
const NAMES_A_SECRET = /(name|ref|names|refs)$/;
const LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration";

const PEM_PRIVATE_KEY = /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?(?:-----END [A-Z ]*PRIVATE KEY-----|$)/g;
const JWT = /eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
/** A token after "Bearer" (8 characters at least, so that prose such as "Bearer auth" stays). */
const BEARER = /\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi;

/** Credentials shorter than this are not searched for literally (they would match ordinary words). */
const MIN_SECRET_LENGTH = 8;

/** The redaction of one bundle: the user's own credentials, searched for everywhere. */
export interface Redactor {
  /** `text` without private keys, JWTs, bearer values and the user's credentials. */
  text(text: string): string;
  /** A deep copy of `value` with the rules above applied to every field and string. */
  object<T>(value: T): T;
}

/** A redactor that also removes `secrets` (the kubeconfig's token, client key), wherever they appear. */
export function redactor(secrets: readonly string[]): Redactor {
  const literal = [
    ...new Set(
      secrets
        .map((s) => s.trim())
        .filter((s) => s.length >= MIN_SECRET_LENGTH)
        .flatMap((s) => [s, Buffer.from(s).toString("base64")]),
    ),
  ].sort((a, b) => b.length - a.length); // a secret containing another goes first
  const text = (t: string): string => {
    let out = t;
    for (const s of literal) out = out.split(s).join(REDACTED);
    return out
      .replace(PEM_PRIVATE_KEY, `${REDACTED} (private key)`)
      .replace(JWT, REDACTED)
      .replace(BEARER, `$1${REDACTED}`);
  };
  const walk = (value: unknown, field: string): unknown => {
    if (typeof value === "string") return isSecretField(field) ? REDACTED : text(value);
    if (Array.isArray(value)) {
      const items = field === "env" ? value.map(redactEnvVar) : value;
      // A list of strings under a credential's name holds credentials; objects name their own fields.
      return items.map((v) => walk(v, typeof v === "string" ? field : ""));
    }
    if (value === null || typeof value !== "object") return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      if (k === "managedFields") continue;
      out[k] = k === LAST_APPLIED ? REDACTED : walk(v, k);
    }
    return out;
  };
  return { text, object: <T>(value: T) => walk(value, "") as T };
}

/** Whether a field of this name holds a credential (its string value is replaced). */
export function isSecretField(name: string): boolean {
  const plain = name.toLowerCase().replace(/[-_.]/g, "");
  return SECRET_FIELD.test(plain) && !NAMES_A_SECRET.test(plain);
}

function redactEnvVar(v: unknown): unknown {
  if (v === null || typeof v !== "object" || !("value" in v)) return v;
  return { ...v, value: REDACTED };
}
