/**
 * Time as the operator sees it, passed in so tests can drive backoff, requeues and transition
 * times without waiting.
 */
export interface Clock {
  /** Milliseconds since the epoch: the wall clock, which NTP or a resumed VM may step either way. */
  now(): number;
  /**
   * Milliseconds on a clock that never steps (an arbitrary origin): for deadlines and durations
   * that must hold whatever the wall clock does, as client-go's leader election measures them.
   */
  monotonic(): number;
  /** Calls `fn` after `ms` (monotonic time); the returned function cancels it. */
  setTimer(ms: number, fn: () => void): () => void;
}

/** The real clock. Timers do not keep the process alive on their own. */
export const systemClock: Clock = {
  now: () => Date.now(),
  monotonic: () => performance.now(),
  setTimer(ms, fn) {
    const t = setTimeout(fn, ms);
    t.unref();
    return () => clearTimeout(t);
  },
};

/** Resolves after `ms` on `clock`, or at once when `signal` aborts. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      cancel();
      signal?.removeEventListener("abort", done);
      resolve();
    };
    const cancel = clock.setTimer(ms, done);
    signal?.addEventListener("abort", done, { once: true });
  });
}
