import type { Clock } from "../../../src/kube/clock";

/**
 * A clock that moves only when a test calls advance(); timers due by then fire in order. Timers run
 * on its monotonic time, as setTimeout does; step() moves only the wall clock (NTP, a VM resumed).
 */
export class ManualClock implements Clock {
  private time: number;
  /** What step() added to the wall clock. */
  private wallOffset = 0;
  private timers: Array<{ at: number; seq: number; fn: () => void }> = [];
  private seq = 0;

  constructor(start = Date.parse("2044-10-22T16:29:24Z")) {
    this.time = start;
  }

  now(): number {
    return this.time + this.wallOffset;
  }

  monotonic(): number {
    return this.time;
  }

  /** Steps the wall clock (now()) by `ms`, back when negative; monotonic time and timers do not move. */
  step(ms: number): void {
    this.wallOffset += ms;
  }

  setTimer(ms: number, fn: () => void): () => void {
    const timer = { at: this.time + Math.max(ms, 0), seq: this.seq++, fn };
    this.timers.push(timer);
    return () => {
      this.timers = this.timers.filter((t) => t !== timer);
    };
  }

  /** Timers not yet fired. */
  get pending(): number {
    return this.timers.length;
  }

  /** Moves time forward by `ms`, firing due timers (and letting promises they resolve settle). */
  async advance(ms: number): Promise<void> {
    const until = this.time + ms;
    for (;;) {
      const next = [...this.timers].sort((a, b) => a.at - b.at || a.seq - b.seq)[0];
      if (!next || next.at > until) break;
      this.timers = this.timers.filter((t) => t !== next);
      this.time = next.at;
      next.fn();
      await flush();
    }
    this.time = until;
    await flush();
  }
}

/** Lets every settled promise's callbacks run. */
export async function flush(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
}
