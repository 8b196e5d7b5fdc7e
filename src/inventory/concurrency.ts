/*
 * How discovery (src/inventory/discover.ts, ./probe.ts) runs commands side by side: a bounded number
 * at a time, split into groups, and never returning or failing while one it started still runs.
 */

/** `step`'s result; when it fails, its error once `running` (if any) has finished too, so no command is left running. */
export async function afterwards<T>(
  running: Promise<unknown> | undefined,
  step: () => Promise<T>,
): Promise<T> {
  try {
    return await step();
  } catch (err) {
    await running?.catch(() => undefined);
    throw err;
  }
}

/** Waits for every promise, then fails with the first one (in list order) that failed, if any. */
export async function allSettled<T extends readonly unknown[]>(
  promises: readonly [...{ [K in keyof T]: Promise<T[K]> }],
): Promise<T> {
  // As a plain array: typescript-eslint's await-thenable cannot see promises in the mapped tuple type.
  const settled = await Promise.allSettled(promises as readonly Promise<unknown>[]);
  for (const s of settled) if (s.status === "rejected") throw s.reason;
  return settled.map((s) => (s as PromiseFulfilledResult<unknown>).value) as unknown as T;
}

/** Runs a task once a place is free; resolves or rejects as the task does. */
export type Limit = <T>(task: () => Promise<T>) => Promise<T>;

/** A Limit with `max` places: at most `max` tasks run at once, started in the order they were given. */
export function limiter(max: number): Limit {
  let running = 0;
  const waiting: Array<() => void> = [];
  return async (task) => {
    if (running >= max) await new Promise<void>((resolve) => waiting.push(resolve));
    else running++;
    try {
      return await task();
    } finally {
      const next = waiting.shift();
      if (next) next();
      else running--;
    }
  };
}

/**
 * `items` in order, cut into min(count, items.length) groups whose sizes differ by at most one:
 * [a,b,c,d,e] in 2 → [[a,b,c],[d,e]].
 */
export function contiguousGroups<T>(items: readonly T[], count: number): T[][] {
  const groups = Math.min(count, items.length);
  const out: T[][] = [];
  let start = 0;
  for (let i = 0; i < groups; i++) {
    const size = Math.floor(items.length / groups) + (i < items.length % groups ? 1 : 0);
    out.push(items.slice(start, start + size));
    start += size;
  }
  return out;
}
