import type { Clock } from "../../kube/clock";

/** Why a review was not started: the line was full, or its deadline passed while it waited. */
export class OverloadedError extends Error {
  constructor(
    message: string,
    readonly reason: "full" | "late",
  ) {
    super(message);
    this.name = "OverloadedError";
  }
}

export interface LimiterOptions {
  readonly clock: Clock;
  /** Tasks running at once. */
  readonly concurrency: number;
  /** Tasks waiting at most; one more is refused at once. */
  readonly queueLimit: number;
}

interface Waiting {
  readonly start: () => void;
  readonly cancelTimer: () => void;
}

/**
 * At most `concurrency` tasks at once, the rest in line (first come, first served) until their
 * deadline: a task that cannot start before it is refused (OverloadedError "late"), and one that
 * finds the line full is refused at once ("full"). Nothing waits forever; nothing is dropped silently.
 */
export class Limiter {
  private running = 0;
  private readonly line: Waiting[] = [];

  constructor(private readonly o: LimiterOptions) {
    if (!(o.concurrency >= 1 && o.queueLimit >= 0))
      throw new Error(
        `a limiter needs concurrency >= 1 and queueLimit >= 0 (got ${o.concurrency}, ${o.queueLimit})`,
      );
  }

  /** Tasks running now and waiting now. */
  get load(): { readonly running: number; readonly waiting: number } {
    return { running: this.running, waiting: this.line.length };
  }

  /** Runs `task` once a slot is free, if that is within `waitMs`. */
  async run<T>(waitMs: number, task: () => Promise<T>): Promise<T> {
    if (this.running >= this.o.concurrency) await this.wait(waitMs);
    else this.running++;
    try {
      return await task();
    } finally {
      const next = this.line.shift();
      if (next) {
        next.cancelTimer();
        next.start(); // the slot passes on; `running` stays
      } else this.running--;
    }
  }

  private wait(waitMs: number): Promise<void> {
    if (this.line.length >= this.o.queueLimit)
      return Promise.reject(
        new OverloadedError(
          `${this.running} reviews running and ${this.line.length} waiting, the most it holds`,
          "full",
        ),
      );
    return new Promise<void>((resolve, reject) => {
      const entry: Waiting = {
        start: resolve,
        cancelTimer: this.o.clock.setTimer(Math.max(0, waitMs), () => {
          const i = this.line.indexOf(entry);
          if (i < 0) return;
          this.line.splice(i, 1);
          reject(
            new OverloadedError(
              `waited ${waitMs} ms behind ${this.running} running and ${this.line.length} waiting reviews`,
              "late",
            ),
          );
        }),
      };
      this.line.push(entry);
    });
  }
}
