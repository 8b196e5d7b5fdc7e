/** Capped exponential backoff, for watch reconnects and reconcile retries. */
export interface BackoffOptions {
  /** The first delay. @default 500 */
  readonly baseMs?: number;
  /** No delay is longer. @default 30000 */
  readonly capMs?: number;
}

/**
 * The delay before retry number `attempt` (0 for the first retry): base·2^attempt, capped. No
 * jitter: one operator process has one watch per resource and one retry per key.
 *
 * @example backoffDelay(3, { baseMs: 100, capMs: 1000 }) // 800
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 500;
  const cap = options.capMs ?? 30_000;
  // 2^31 would overflow nothing, but past 40 doublings every base is already above any cap.
  return Math.min(cap, base * 2 ** Math.min(Math.max(attempt, 0), 40));
}
