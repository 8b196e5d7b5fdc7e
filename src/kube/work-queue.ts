import { backoffDelay, type BackoffOptions } from "./backoff";
import type { Clock } from "./clock";

/** What a handler asks for after it succeeds. */
export interface HandlerResult {
  /** Run the key again after this long (e.g. to wait for something no watch reports). */
  readonly requeueAfterMs?: number;
}

export interface WorkQueueOptions {
  readonly clock: Clock;
  /** Retry delays of a failing key. @default { baseMs: 1000, capMs: 300000 } */
  readonly backoff?: BackoffOptions;
}

/**
 * Keys of objects to reconcile, as client-go's workqueue: a key waits at most once however often
 * it is added; a key being processed is never handed to a second worker, and adding it meanwhile
 * runs it once more afterwards; a failing key comes back after a capped exponential backoff, and
 * its count resets when it succeeds.
 */
export class WorkQueue {
  private readonly queue: string[] = [];
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly delayed = new Map<string, { at: number; cancel: () => void }>();
  private readonly waiting: Array<(key: string | undefined) => void> = [];
  private shuttingDown = false;
  /** Worker loops running, including those started when a handler released its slot. */
  private readonly loops = new Set<Promise<void>>();

  constructor(private readonly options: WorkQueueOptions) {}

  /** Keys waiting to be processed (not counting those being processed or delayed). */
  get depth(): number {
    return this.queue.length;
  }

  /**
   * True while a key waits, is being processed, or comes back (a delayed add: a coalesced status, a
   * retry) within `withinMs`: what a caller that wants the queue at rest waits out.
   */
  busyWithin(withinMs: number): boolean {
    if (this.queue.length > 0 || this.processing.size > 0) return true;
    const horizon = this.options.clock.now() + withinMs;
    for (const d of this.delayed.values()) if (d.at <= horizon) return true;
    return false;
  }

  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.dirty.add(key);
    if (this.processing.has(key)) return; // done() queues it again
    const worker = this.waiting.shift();
    if (worker) {
      this.dirty.delete(key);
      this.processing.add(key);
      worker(key);
    } else this.queue.push(key);
  }

  /** Adds `key` after `ms`; an earlier pending add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = this.options.clock.now() + ms;
    const pending = this.delayed.get(key);
    if (pending && pending.at <= at) return;
    pending?.cancel();
    const cancel = this.options.clock.setTimer(ms, () => {
      this.delayed.delete(key);
      this.add(key);
    });
    this.delayed.set(key, { at, cancel });
  }

  /** Failures of `key` since it last succeeded. */
  retries(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /**
   * Runs `handler` on `workers` keys at a time until `signal` aborts and running handlers finish.
   * A handler that calls `release()` (before a call that may take hours: an apply) gives its slot
   * to a new worker at once and keeps its key (never run twice at once) until it returns, so a few
   * hung calls cannot stop the other keys.
   */
  async run(
    workers: number,
    handler: (key: string, release: () => void) => Promise<HandlerResult>,
    signal: AbortSignal,
  ): Promise<void> {
    signal.addEventListener("abort", () => this.shutDown(), { once: true });
    if (signal.aborted) this.shutDown();
    for (let i = 0; i < workers; i++) this.spawn(handler);
    while (this.loops.size > 0) await Promise.all([...this.loops]);
  }

  /** Handlers that released their slot and are still running. */
  get released(): number {
    return this.releasedCount;
  }
  private releasedCount = 0;

  private spawn(handler: (key: string, release: () => void) => Promise<HandlerResult>): void {
    const loop = this.work(handler).finally(() => this.loops.delete(loop));
    this.loops.add(loop);
  }

  private async work(handler: (key: string, release: () => void) => Promise<HandlerResult>): Promise<void> {
    for (;;) {
      const key = await this.next();
      if (key === undefined) return;
      let released = false;
      const release = () => {
        if (released || this.shuttingDown) return;
        released = true;
        this.releasedCount++;
        this.spawn(handler);
      };
      try {
        const result = await handler(key, release);
        this.failures.delete(key);
        if (result.requeueAfterMs !== undefined) this.addAfter(key, result.requeueAfterMs);
      } catch {
        // The handler reports its own errors; the queue only retries.
        const n = this.failures.get(key) ?? 0;
        this.failures.set(key, n + 1);
        this.addAfter(key, backoffDelay(n, { baseMs: 1000, capMs: 300_000, ...this.options.backoff }));
      } finally {
        this.done(key);
      }
      // This loop's slot went to another worker: end here.
      if (released) return void this.releasedCount--;
    }
  }

  private next(): Promise<string | undefined> {
    const key = this.queue.shift();
    if (key !== undefined) {
      this.dirty.delete(key);
      this.processing.add(key);
      return Promise.resolve(key);
    }
    if (this.shuttingDown) return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private done(key: string): void {
    this.processing.delete(key);
    if (!this.dirty.has(key)) return;
    this.dirty.delete(key); // add() re-marks it and hands it to a waiting worker or the queue
    this.add(key);
  }

  private shutDown(): void {
    this.shuttingDown = true;
    for (const { cancel } of this.delayed.values()) cancel();
    this.delayed.clear();
    this.queue.splice(0);
    this.dirty.clear();
    this.waiting.splice(0).forEach((w) => w(undefined));
  }
}
