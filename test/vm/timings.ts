/** Step timings of a qemu-tier suite, printed as one table when the suite ends. */
export class Timings {
  private readonly rows: Array<[string, number]> = [];
  private readonly start = Date.now();

  /** Records a step measured elsewhere (or a note, with 0 ms). */
  add(name: string, ms: number): void {
    this.rows.push([name, ms]);
  }

  /** Runs `fn` and records how long it took, also when it fails. */
  async timed<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = Date.now();
    try {
      return await fn();
    } finally {
      this.add(name, Date.now() - t0);
    }
  }

  /** The table: a heading, a row per step, the suite total and any extra rows after it. */
  table(heading: string, extra: Array<[string, number]> = []): string {
    const rows: Array<[string, number]> = [...this.rows, ["suite total", Date.now() - this.start], ...extra];
    const width = Math.max(...rows.map(([n]) => n.length));
    return [
      heading,
      ...rows.map(([n, ms]) => `  ${n.padEnd(width)}  ${(ms / 1000).toFixed(1).padStart(6)} s`),
    ].join("\n");
  }
}

/** "7.6 s, 7.9 s" */
export function formatBoots(bootTimesMs: readonly number[] | undefined): string {
  return (bootTimesMs ?? []).map((ms) => `${(ms / 1000).toFixed(1)} s`).join(", ");
}
