/**
 * Step timings of a slow suite (the qemu tiers, the real engine, the journey), printed as one table
 * when the suite ends: each step's seconds and the 1-minute load average when it ended, since these
 * suites share a 2-core machine and a slow step means little without the load beside it.
 */
import * as os from "node:os";

interface Row {
  readonly name: string;
  readonly ms: number;
  readonly load: number;
}

export class Timings {
  private readonly rows: Row[] = [];
  private readonly start = Date.now();

  /** @param live called with each step's row as it ends (e.g. the journey writes it to stderr at once). */
  constructor(private readonly live?: (line: string) => void) {}

  /** Records a step measured elsewhere (or a note, with 0 ms). */
  add(name: string, ms: number): void {
    const row = { name, ms, load: os.loadavg()[0]! };
    this.rows.push(row);
    this.live?.(`${name}: ${format(row).trim()}`);
  }

  /** Runs `fn` and records how long it took (for a promise: until it settles), also when it fails. */
  timed<T>(name: string, fn: () => T): T {
    const t0 = Date.now();
    const done = () => this.add(name, Date.now() - t0);
    let result: T;
    try {
      result = fn();
    } catch (e) {
      done();
      throw e;
    }
    if (result instanceof Promise) return result.finally(done) as T;
    done();
    return result;
  }

  /** The table: a heading, a row per step, the suite total and any extra rows after it. */
  table(heading: string, extra: Array<[string, number]> = []): string {
    const rows: Row[] = [
      ...this.rows,
      { name: "suite total", ms: Date.now() - this.start, load: os.loadavg()[0]! },
      ...extra.map(([name, ms]) => ({ name, ms, load: Number.NaN })),
    ];
    const width = Math.max(...rows.map((r) => r.name.length));
    return [heading, ...rows.map((r) => `  ${r.name.padEnd(width)}  ${format(r)}`)].join("\n");
  }
}

function format(r: Row): string {
  const load = Number.isNaN(r.load) ? "" : ` (load ${r.load.toFixed(1)})`;
  return `${(r.ms / 1000).toFixed(1).padStart(6)} s${load}`;
}

/** "7.6 s, 7.9 s" */
export function formatBoots(bootTimesMs: readonly number[] | undefined): string {
  return (bootTimesMs ?? []).map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ");
}
