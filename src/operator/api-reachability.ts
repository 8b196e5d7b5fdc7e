import { backoffDelay } from "../kube/backoff";
import type { Clock } from "../kube/clock";
import type { KubeClient } from "../kube/client";
import { KubeApiError } from "../kube/errors";

/**
 * Whether the API server answers, as the operator's own requests show it: a request that got no
 * answer at all (connection refused or reset, timeout: KubeApiError status 0) makes it unreachable,
 * any answer (even an error status) reachable again. Each change is logged once — not each failed
 * request: an outage of 30 s used to give 411 log lines. While it is unreachable the reconcile
 * workers wait (`whenReachable`) instead of each key failing and retrying on its own, and one cheap
 * probe (`probe`, a GET) is sent after a capped exponential backoff (0.5 s doubling to 30 s), as are
 * the informers' reconnects; any answer to any of them ends the outage. (A watch that reconnects
 * may stream for minutes before it completes: its first event counts as an answer too.)
 */
export class ApiReachability {
  private down: { since: number; failed: number } | undefined;
  private waiters: Array<() => void> = [];
  private cancelProbe: (() => void) | undefined;

  constructor(
    private readonly clock: Clock,
    private readonly log: (entry: Record<string, unknown>) => void,
    /** A cheap request whose outcome is recorded here (it must not throw for an answer like 404). */
    private readonly probe?: () => Promise<unknown>,
  ) {}

  get reachable(): boolean {
    return !this.down;
  }

  /** Resolves when the API server answers again, or at once if it does; also when `signal` aborts. */
  whenReachable(signal?: AbortSignal): Promise<void> {
    if (!this.down || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      // The signal is the operator's own, alive for its whole run: a waiter released by the API
      // server's answer takes its listener off it, or each outage would leave one per waiter.
      const done = () => {
        signal?.removeEventListener("abort", done);
        this.waiters = this.waiters.filter((w) => w !== done);
        resolve();
      };
      this.waiters.push(done);
      signal?.addEventListener("abort", done, { once: true });
    });
  }

  /** The outcome of one request: an error (of any kind) or success. */
  record(error?: unknown): void {
    if (error instanceof KubeApiError && error.status === 0) {
      if (this.down) {
        this.down.failed++;
        return;
      }
      this.down = { since: this.clock.now(), failed: 1 };
      this.scheduleProbe(0);
      this.log({
        msg: "API server unreachable; reconciles wait, watches reconnect with backoff",
        error: error.message,
      });
      return;
    }
    if (!this.down) return;
    const { since, failed } = this.down;
    this.down = undefined;
    this.cancelProbe?.();
    this.cancelProbe = undefined;
    this.log({
      msg: "API server reachable again",
      unreachableSeconds: Math.round((this.clock.now() - since) / 1000),
      failedRequests: failed,
    });
    for (const w of this.waiters.splice(0)) w();
  }

  /** Stops probing (the operator stops). */
  close(): void {
    this.cancelProbe?.();
    this.cancelProbe = undefined;
  }

  private scheduleProbe(attempt: number): void {
    if (!this.probe) return;
    const probe = this.probe;
    this.cancelProbe = this.clock.setTimer(backoffDelay(attempt, { baseMs: 500, capMs: 30_000 }), () => {
      this.cancelProbe = undefined;
      void probe().then(
        () => this.record(),
        (e: unknown) => {
          this.record(e);
          if (this.down) this.scheduleProbe(attempt + 1);
        },
      );
    });
  }

  /** `kube`, with every request's outcome recorded here. */
  watching(kube: KubeClient): KubeClient {
    const track =
      <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
      async (...args: A): Promise<R> => {
        try {
          const result = await fn(...args);
          this.record();
          return result;
        } catch (e) {
          this.record(e);
          throw e;
        }
      };
    return {
      get: track(kube.get.bind(kube)),
      list: track(kube.list.bind(kube)),
      watch: track((r, ns, rv, onEvent, signal) =>
        kube.watch(
          r,
          ns,
          rv,
          (e) => {
            if (this.down) this.record();
            onEvent(e as never);
          },
          signal,
        ),
      ) as KubeClient["watch"],
      create: track(kube.create.bind(kube)),
      createSubresource: track(kube.createSubresource.bind(kube)),
      patch: track(kube.patch.bind(kube)),
      delete: track(kube.delete.bind(kube)),
    } as KubeClient;
  }
}
