import { integerFromEnv } from "./env-settings";

/**
 * How many agents one provider call asks at a time (plans at preview, status at refresh). A fleet of
 * hundreds is not opened as hundreds of connections at once: on a shared machine (or through one
 * API server's pod proxy) an unbounded fan-out makes every answer slow; a small bound keeps the
 * total near (nodes / bound) × one agent's latency. @default 8
 */
export const DEFAULT_AGENT_CONCURRENCY = 8;

/** The environment variable that overrides the bound (a positive integer), read once per provider. */
export const AGENT_CONCURRENCY_ENV = "PULUMI_LVM_AGENT_CONCURRENCY";

/** The bound from the environment: its value when a positive integer, else a clear error; unset → default. */
export function agentConcurrencyFrom(env: NodeJS.ProcessEnv): number {
  return integerFromEnv(env, {
    name: AGENT_CONCURRENCY_ENV,
    fallback: DEFAULT_AGENT_CONCURRENCY,
    min: 1,
    meaning: "agents asked at a time",
  });
}

/**
 * Runs `fn` on every item with at most `limit` calls in flight; the results in the items' order.
 * A rejection of one call does not stop the others (callers catch per item); if any rejects, the
 * first rejection in item order is thrown once all have settled.
 */
export async function mapLimited<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  if (!Number.isInteger(limit) || limit < 1)
    throw new Error(`concurrency limit ${limit}: must be a positive integer`);
  const settled: PromiseSettledResult<R>[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      try {
        settled[i] = { status: "fulfilled", value: await fn(items[i]!, i) };
      } catch (reason) {
        settled[i] = { status: "rejected", reason };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  const failed = settled.find((s) => s.status === "rejected");
  if (failed) throw failed.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<R>).value);
}
