import {
  counter,
  durationHistogram,
  Registry,
  scrapeGauge,
  type Counter,
  type Gauge,
  type Histogram,
} from "./prometheus";

/**
 * What the agent's and the operator's metrics classes share: the process's registry (a
 * dependency: main.ts passes one with the process and runtime metrics; tests get a fresh one), the
 * metric builders bound to it, and the exposition text of it.
 */
export abstract class RegistryMetrics {
  /** @param registry the process's registry (main.ts adds the process and runtime metrics); tests get a fresh one */
  constructor(readonly registry: Registry = new Registry()) {}

  protected counter<L extends string>(name: string, help: string, labelNames: readonly L[]): Counter<L> {
    return counter(this.registry, name, help, labelNames);
  }

  /** A histogram of durations in seconds (5 ms to 5 min). */
  protected durationHistogram<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
  ): Histogram<L> {
    return durationHistogram(this.registry, name, help, labelNames);
  }

  /** A gauge read at scrape time (see scrapeGauge in ./prometheus). */
  protected scrapeGauge<L extends string>(
    name: string,
    help: string,
    labelNames: readonly L[],
    samples: () => ReadonlyArray<readonly [Partial<Record<L, string>>, number]>,
  ): Gauge<L> {
    return scrapeGauge(this.registry, name, help, labelNames, samples);
  }

  /** The exposition text of the registry (text 0.0.4). */
  protected exposition(): Promise<string> {
    return this.registry.metrics();
  }
}
