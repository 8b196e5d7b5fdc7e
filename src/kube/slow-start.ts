/** The first batch and the largest one (client-go's ReplicaSet controller starts at 1 too). */
export interface SlowStartOptions {
  /** @default 1 */
  readonly initial?: number;
  /** @default 64 */
  readonly max?: number;
}

/**
 * Runs `run` on every item, in batches that double in size (1, 2, 4, … up to `max`), each batch
 * at once and waited for before the next: client-go's slowStartBatch, so that a fleet of 500
 * creates costs about a dozen round trips instead of 500, while a request the API server refuses
 * (a quota, admission) costs a handful of failures before the batches grow. Unlike client-go's,
 * every item is tried (a failure of one node must not hold back the others; the caller reports
 * each). The results, in the items' order.
 */
export async function inSlowStartBatches<T, R>(
  items: readonly T[],
  run: (item: T) => Promise<R>,
  options: SlowStartOptions = {},
): Promise<PromiseSettledResult<R>[]> {
  const max = Math.max(1, options.max ?? 64);
  let size = Math.min(max, Math.max(1, options.initial ?? 1));
  const results: PromiseSettledResult<R>[] = [];
  for (let i = 0; i < items.length;) {
    const batch = items.slice(i, i + size);
    results.push(...(await Promise.allSettled(batch.map((item) => run(item)))));
    i += batch.length;
    size = Math.min(max, size * 2);
  }
  return results;
}
