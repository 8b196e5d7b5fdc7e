import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * Prometheus metrics through prom-client, shared by the agent and the operator. Each process owns
 * one Registry, passed to its metrics class as a dependency (tests give each instance a fresh one,
 * so nothing is shared through prom-client's global registry).
 */
export { Counter, Gauge, Histogram, Registry };

/** Labels of one time series. */
export type Labels = Readonly<Record<string, string>>;

/** The exposition format served at /metrics (text 0.0.4). */
export const EXPOSITION_CONTENT_TYPE = Registry.PROMETHEUS_CONTENT_TYPE;

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300];

/** The registry of a running agent or operator: with prom-client's process and Node.js runtime metrics. */
export function processRegistry(): Registry {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  return registry;
}

export function counter<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Counter<L> {
  return new Counter({ name, help, labelNames, registers: [registry] });
}

/** A histogram of durations in seconds (5 ms to 5 min). */
export function durationHistogram<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
): Histogram<L> {
  return new Histogram({ name, help, labelNames, buckets: DURATION_BUCKETS, registers: [registry] });
}

/**
 * A gauge read at scrape time: `samples()` gives its series now; none (not even a label-less 0)
 * when it returns an empty list, e.g. while the value is unknown.
 */
export function scrapeGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  samples: () => ReadonlyArray<readonly [Partial<Record<L, string>>, number]>,
): Gauge<L> {
  return new Gauge({
    name,
    help,
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      const now = samples();
      // reset() leaves a label-less gauge at 0; an unknown value is no sample, not a 0.
      if (labelNames.length === 0 && now.length === 0) this.remove({});
      for (const [labels, value] of now) this.set(labels, value);
    },
  });
}
