import type { CertificateFacts } from "../../tls/x509";

/*
 * When the operator issues a certificate: pure decisions on what the Secrets hold and the time.
 * A certificate is renewed at two thirds of its life (cert-manager's default), a serving
 * certificate also when the user raised `rotation`, when no CA in the bundle signed it, or when a
 * newer CA has been published long enough for every reader to trust it.
 */

export interface CertificateSettings {
  /** A serving certificate's lifetime. */
  readonly leafDays: number;
  /** The CA's lifetime (longer: it is renewed with an overlap, see caBundle). */
  readonly caDays: number;
  /** The user's rotation counter (LvmSystem `certificates.rotation`): a higher one re-issues every leaf. */
  readonly rotation: number;
  /**
   * How long a new CA is published in ca.crt and the caBundle before leaves are signed by it: a
   * Secret volume reaches the pods within the kubelet's sync period (about a minute).
   */
  readonly caPublishMs: number;
}

export const DEFAULT_LEAF_DAYS = 90;
export const DEFAULT_CA_DAYS = 3 * 365;
export const DEFAULT_CA_PUBLISH_MS = 5 * 60_000;
/** The fraction of its life after which a certificate is renewed. */
export const RENEW_AT = 2 / 3;

/** When `cert` is due for renewal (ms since the epoch): two thirds into its validity. */
export function renewalTime(cert: Pick<CertificateFacts, "notBefore" | "notAfter">): number {
  return cert.notBefore + Math.floor((cert.notAfter - cert.notBefore) * RENEW_AT);
}

/** Whether to issue a new CA: none yet, or the current one past two thirds of its life. */
export function caDue(current: CertificateFacts | undefined, now: number): "missing" | "due" | undefined {
  if (!current) return "missing";
  return now >= renewalTime(current) ? "due" : undefined;
}

/**
 * The CAs ca.crt and the caBundle list: the current one, and the previous one while it is still
 * valid (a serving certificate it signed may still be served while the new bundle propagates).
 */
export function trustedCas<T extends CertificateFacts>(
  current: T,
  previous: T | undefined,
  now: number,
): T[] {
  return previous && previous.notAfter > now ? [current, previous] : [current];
}

/**
 * Which CA signs the next serving certificate: the current one once it has been published for
 * `caPublishMs` (readers' ca.crt have it), else the previous one while it outlives the new leaf.
 */
export function signingCa<T extends CertificateFacts>(
  current: T,
  previous: T | undefined,
  now: number,
  s: CertificateSettings,
): T {
  if (now - current.notBefore >= s.caPublishMs || !previous) return current;
  return previous.notAfter > now + s.leafDays * 86_400_000 ? previous : current;
}

/** What a serving Secret holds, as the decision reads it. */
export interface ServedState {
  readonly leaf?: CertificateFacts;
  /** The CA (of the trusted ones) whose signature the leaf carries; undefined: none of them. */
  readonly signedBy?: CertificateFacts;
  /** The rotation recorded on the Secret when its leaf was issued. */
  readonly rotation: number;
}

export type LeafReason = "missing" | "rotation" | "due" | "untrusted" | "ca-rotated";

/** Why the serving certificate must be re-issued now; undefined: keep it. */
export function leafDue(
  served: ServedState,
  cas: { current: CertificateFacts; previous?: CertificateFacts },
  now: number,
  s: CertificateSettings,
): LeafReason | undefined {
  if (!served.leaf) return "missing";
  if (served.rotation < s.rotation) return "rotation";
  if (now >= renewalTime(served.leaf)) return "due";
  if (!served.signedBy) return "untrusted";
  if (
    served.signedBy.fingerprint256 !== cas.current.fingerprint256 &&
    signingCa(cas.current, cas.previous, now, s).fingerprint256 === cas.current.fingerprint256
  )
    return "ca-rotated";
  return undefined;
}

/** When to look again: the earliest renewal or publication time ahead, at most `maxMs` away. */
export function nextCheck(times: readonly number[], now: number, maxMs: number): number {
  const ahead = times.filter((t) => t > now);
  return Math.min(now + maxMs, ...ahead);
}
