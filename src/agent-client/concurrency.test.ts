import {
  agentConcurrencyFrom,
  AGENT_CONCURRENCY_ENV,
  DEFAULT_AGENT_CONCURRENCY,
  mapLimited,
} from "./concurrency";

/** A call that finishes when the test says so, recording how many were in flight at once. */
function gate() {
  let inFlight = 0;
  let peak = 0;
  const started: number[] = [];
  const release = new Map<number, () => void>();
  const fn = (item: number) =>
    new Promise<number>((resolve) => {
      inFlight++;
      peak = Math.max(peak, inFlight);
      started.push(item);
      release.set(item, () => {
        inFlight--;
        resolve(item * 10);
      });
    });
  return { fn, started, release, peak: () => peak };
}

const tick = () => new Promise((r) => setImmediate(r));

describe("mapLimited", () => {
  test.each([
    { items: 0, limit: 3, peak: 0 },
    { items: 1, limit: 8, peak: 1 },
    { items: 5, limit: 1, peak: 1 },
    { items: 5, limit: 2, peak: 2 },
    { items: 50, limit: 8, peak: 8 },
    { items: 3, limit: 8, peak: 3 },
  ])(
    "$items items, limit $limit: at most $peak in flight, results in item order",
    async ({ items, limit, peak }) => {
      const g = gate();
      const list = Array.from({ length: items }, (_, i) => i);
      const done = mapLimited(list, limit, g.fn);
      // Release in reverse start order as calls appear, so completion order differs from item order.
      while (g.started.length < items || g.release.size) {
        await tick();
        const waiting = [...g.release.keys()];
        for (const k of waiting.reverse()) {
          g.release.get(k)!();
          g.release.delete(k);
        }
      }
      expect(await done).toEqual(list.map((i) => i * 10));
      expect(g.peak()).toBe(peak);
    },
  );

  test("the limit is reached before any call finishes, and a finished call lets the next one start", async () => {
    const g = gate();
    const done = mapLimited([0, 1, 2, 3], 2, g.fn);
    await tick();
    expect(g.started).toEqual([0, 1]);
    g.release.get(1)!();
    await tick();
    expect(g.started).toEqual([0, 1, 2]);
    for (const k of [0, 2]) g.release.get(k)!();
    await tick();
    g.release.get(3)!();
    expect(await done).toEqual([0, 10, 20, 30]);
  });

  test("one failing call does not stop the others; the first failure in item order is thrown", async () => {
    const seen: number[] = [];
    const run = mapLimited([0, 1, 2, 3, 4], 2, async (i) => {
      seen.push(i);
      if (i === 3) throw new Error("three");
      if (i === 1) throw new Error("one");
      return i;
    });
    await expect(run).rejects.toThrow("one");
    expect(seen.sort()).toEqual([0, 1, 2, 3, 4]);
  });

  test.each([0, -1, 1.5, NaN])("limit %p is refused", async (limit) => {
    await expect(mapLimited([1], limit, async (x) => x)).rejects.toThrow(/must be a positive integer/);
  });
});

describe("agentConcurrencyFrom", () => {
  test.each([
    { value: undefined, expected: DEFAULT_AGENT_CONCURRENCY },
    { value: "", expected: DEFAULT_AGENT_CONCURRENCY },
    { value: "1", expected: 1 },
    { value: " 32 ", expected: 32 },
  ])("$value → $expected", ({ value, expected }) => {
    expect(agentConcurrencyFrom(value === undefined ? {} : { [AGENT_CONCURRENCY_ENV]: value })).toBe(
      expected,
    );
  });

  test.each(["0", "-2", "2.5", "eight"])("%p is an error naming the variable", (value) => {
    expect(() => agentConcurrencyFrom({ [AGENT_CONCURRENCY_ENV]: value })).toThrow(
      `${AGENT_CONCURRENCY_ENV}=${JSON.stringify(value)}: must be a positive integer`,
    );
  });
});
