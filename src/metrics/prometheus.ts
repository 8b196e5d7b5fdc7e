/**
 * Prometheus metric primitives in the text exposition format (version 0.0.4), shared by the agent
 * and the operator: counters and histograms with labels, and the label formatting.
 */

/** Labels of one time series. */
export type Labels = Readonly<Record<string, string>>;

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

export class Counter {
  private readonly values = new Map<string, { labels: Labels; value: number }>();
  constructor(
    readonly name: string,
    readonly help: string,
  ) {}

  inc(labels: Labels, by = 1): void {
    const key = labelKey(labels);
    const entry = this.values.get(key) ?? { labels, value: 0 };
    entry.value += by;
    this.values.set(key, entry);
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} counter`);
    for (const { labels, value } of this.values.values())
      out.push(`${this.name}${formatLabels(labels)} ${value}`);
  }
}

export class Histogram {
  private readonly series = new Map<
    string,
    { labels: Labels; counts: number[]; sum: number; count: number }
  >();
  constructor(
    readonly name: string,
    readonly help: string,
    readonly buckets: readonly number[] = DURATION_BUCKETS,
  ) {}

  observe(labels: Labels, value: number): void {
    const key = labelKey(labels);
    const s = this.series.get(key) ?? { labels, counts: this.buckets.map(() => 0), sum: 0, count: 0 };
    this.buckets.forEach((b, i) => {
      if (value <= b) s.counts[i]!++;
    });
    s.sum += value;
    s.count++;
    this.series.set(key, s);
  }

  render(out: string[]): void {
    out.push(`# HELP ${this.name} ${this.help}`, `# TYPE ${this.name} histogram`);
    for (const s of this.series.values()) {
      this.buckets.forEach((b, i) =>
        out.push(`${this.name}_bucket${formatLabels({ ...s.labels, le: String(b) })} ${s.counts[i]}`),
      );
      out.push(`${this.name}_bucket${formatLabels({ ...s.labels, le: "+Inf" })} ${s.count}`);
      out.push(
        `${this.name}_sum${formatLabels(s.labels)} ${s.sum}`,
        `${this.name}_count${formatLabels(s.labels)} ${s.count}`,
      );
    }
  }
}

/** A gauge read at scrape time: HELP, TYPE and one line per sample. */
export function gauge(
  out: string[],
  name: string,
  help: string,
  samples: ReadonlyArray<readonly [Labels, number]>,
): void {
  out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`);
  for (const [labels, value] of samples) out.push(`${name}${formatLabels(labels)} ${value}`);
}

function labelKey(labels: Labels): string {
  return JSON.stringify(Object.entries(labels).sort(([a], [b]) => (a < b ? -1 : 1)));
}

/** `{a="x",b="y"}` with `\`, `"` and newlines escaped as the exposition format requires. */
export function formatLabels(labels: Labels): string {
  const parts = Object.entries(labels).map(
    ([k, v]) => `${k}="${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n")}"`,
  );
  return parts.length ? `{${parts.join(",")}}` : "";
}
