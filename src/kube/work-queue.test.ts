import fc from "fast-check";
import { ManualClock, flush } from "../../test/support/kube/manual-clock";
import { WorkQueue, type HandlerResult } from "./work-queue";

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

describe("WorkQueue", () => {
  test("a key added many times while it waits runs once", async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    const runs: string[] = [];
    for (let i = 0; i < 5; i++) q.add("ns/a");
    q.add("ns/b");
    expect(q.depth).toBe(2);
    const stop = new AbortController();
    const running = q.run(2, async (k) => (runs.push(k), {}), stop.signal);
    await flush();
    stop.abort();
    await running;
    expect(runs.sort()).toEqual(["ns/a", "ns/b"]);
  });

  test("busyWithin: a waiting key, a key being processed, and a delayed add due within the horizon", async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    expect(q.busyWithin(2000)).toBe(false);
    q.add("ns/a");
    expect(q.busyWithin(2000)).toBe(true); // waiting
    const gate = deferred();
    const stop = new AbortController();
    const running = q.run(1, async () => (await gate.promise, {}), stop.signal);
    await flush();
    expect(q.depth).toBe(0);
    expect(q.busyWithin(2000)).toBe(true); // being processed: depth alone says idle
    gate.resolve();
    await flush();
    expect(q.busyWithin(2000)).toBe(false);
    q.addAfter("ns/b", 1000);
    expect(q.depth).toBe(0);
    expect(q.busyWithin(500)).toBe(false); // due after the horizon
    expect(q.busyWithin(2000)).toBe(true); // a coalesced add due within it
    stop.abort();
    await running;
  });

  test("a key added while it is processed runs again afterwards, never at the same time", async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    const gate = deferred();
    let active = 0;
    let maxActive = 0;
    let runs = 0;
    const stop = new AbortController();
    const running = q.run(
      4,
      async () => {
        active++;
        maxActive = Math.max(maxActive, active);
        runs++;
        if (runs === 1) await gate.promise;
        active--;
        return {};
      },
      stop.signal,
    );
    q.add("ns/a");
    await flush();
    q.add("ns/a");
    q.add("ns/a");
    await flush();
    expect(runs).toBe(1); // the second run waits for the first
    gate.resolve();
    await flush();
    expect(runs).toBe(2);
    expect(maxActive).toBe(1);
    stop.abort();
    await running;
  });

  test("a failing key is retried after 1 s, 2 s, 4 s ... and its count resets on success", async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock, backoff: { baseMs: 1000, capMs: 4000 } });
    const times: number[] = [];
    const t0 = clock.now();
    let calls = 0;
    const stop = new AbortController();
    const running = q.run(
      1,
      async () => {
        times.push(clock.now() - t0);
        if (++calls <= 4) throw new Error("boom");
        return {};
      },
      stop.signal,
    );
    q.add("ns/a");
    await flush();
    await clock.advance(20_000);
    expect(times).toEqual([0, 1000, 3000, 7000, 11000]);
    expect(q.retries("ns/a")).toBe(0);
    stop.abort();
    await running;
  });

  test("requeueAfterMs runs the key again later; an earlier addAfter wins", async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    const times: number[] = [];
    const t0 = clock.now();
    const stop = new AbortController();
    const running = q.run(
      1,
      async (): Promise<HandlerResult> => (
        times.push(clock.now() - t0),
        times.length === 1 ? { requeueAfterMs: 5000 } : {}
      ),
      stop.signal,
    );
    q.add("ns/a");
    await flush();
    q.addAfter("ns/a", 2000);
    await clock.advance(10_000);
    expect(times).toEqual([0, 2000]);
    stop.abort();
    await running;
  });

  test("property: whatever the order of adds, every key runs, and no key runs twice at once", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom("a", "b", "c", "d"), { minLength: 1, maxLength: 40 }),
        async (adds) => {
          const q = new WorkQueue({ clock: new ManualClock() });
          const active = new Set<string>();
          const seen = new Set<string>();
          let overlap = false;
          const stop = new AbortController();
          const running = q.run(
            3,
            async (k) => {
              if (active.has(k)) overlap = true;
              active.add(k);
              seen.add(k);
              await new Promise((r) => setImmediate(r));
              active.delete(k);
              return {};
            },
            stop.signal,
          );
          for (const k of adds) {
            q.add(k);
            if (k === "a") await new Promise((r) => setImmediate(r));
          }
          await flush();
          stop.abort();
          await running;
          expect(overlap).toBe(false);
          expect([...seen].sort()).toEqual([...new Set(adds)].sort());
        },
      ),
      { numRuns: 50 },
    );
  });

  test("handlers that release their slot (hung applies) do not stop the other keys; their key is never run twice at once", async () => {
    const clock = new ManualClock();
    const q = new WorkQueue({ clock });
    const hung = deferred();
    const runs: string[] = [];
    const stop = new AbortController();
    const running = q.run(
      2,
      async (k, release) => {
        runs.push(k);
        if (k.startsWith("hung/")) {
          release();
          await hung.promise;
        }
        return {};
      },
      stop.signal,
    );
    q.add("hung/a");
    q.add("hung/b");
    await flush();
    expect(q.released).toBe(2);
    q.add("ok/c");
    q.add("hung/a"); // still running: waits for it
    await flush();
    expect(runs).toEqual(["hung/a", "hung/b", "ok/c"]);
    hung.resolve();
    await flush();
    expect(runs).toEqual(["hung/a", "hung/b", "ok/c", "hung/a"]);
    expect(q.released).toBe(0);
    stop.abort();
    await running;
  });
});
