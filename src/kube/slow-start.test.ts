import { inSlowStartBatches } from "./slow-start";

/** Runs `n` items through inSlowStartBatches, each taking a tick; what ran at once, in order. */
async function observe(n: number, options?: { initial?: number; max?: number }, fails = new Set<number>()) {
  let running = 0;
  const batches: number[] = [];
  let batch = 0;
  const results = await inSlowStartBatches(
    Array.from({ length: n }, (_, i) => i),
    async (i) => {
      running++;
      batch = Math.max(batch, running);
      await new Promise((r) => setImmediate(r));
      running--;
      if (running === 0) {
        batches.push(batch);
        batch = 0;
      }
      if (fails.has(i)) throw new Error(`item ${i} failed`);
      return i * 10;
    },
    options,
  );
  return { batches, results };
}

describe("inSlowStartBatches", () => {
  test("batches double from 1 up to the cap; each waits for the one before", async () => {
    expect((await observe(100)).batches).toEqual([1, 2, 4, 8, 16, 32, 37]);
    expect((await observe(200, { max: 16 })).batches).toEqual([1, 2, 4, 8, ...Array(11).fill(16), 9]);
    expect((await observe(3, { initial: 8 })).batches).toEqual([3]);
    expect((await observe(0)).batches).toEqual([]);
  });

  test("every item is tried, failures too; results in the items' order", async () => {
    const { results } = await observe(10, {}, new Set([0, 5]));
    expect(results).toHaveLength(10);
    expect(results.map((r) => r.status)).toEqual([
      "rejected",
      ...Array(4).fill("fulfilled"),
      "rejected",
      ...Array(4).fill("fulfilled"),
    ]);
    expect(results[3]).toEqual({ status: "fulfilled", value: 30 });
    expect((results[5] as PromiseRejectedResult).reason.message).toBe("item 5 failed");
  });
});
