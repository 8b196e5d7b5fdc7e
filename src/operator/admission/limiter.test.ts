import { flush, ManualClock } from "../../../test/support/kube/manual-clock";
import { Limiter, OverloadedError } from "./limiter";

/** A task that finishes when the test says so. */
function gate() {
  let open: () => void = () => undefined;
  const done = new Promise<void>((r) => (open = r));
  return { open, task: () => done };
}

test("at most `concurrency` run; the rest start in arrival order as slots free", async () => {
  const clock = new ManualClock();
  const limiter = new Limiter({ clock, concurrency: 2, queueLimit: 10 });
  const gates = [gate(), gate(), gate(), gate()];
  const started: number[] = [];
  const runs = gates.map((g, i) => limiter.run(5000, () => (started.push(i), g.task())));
  await flush();
  expect(started).toEqual([0, 1]);
  expect(limiter.load).toEqual({ running: 2, waiting: 2 });
  gates[1]!.open();
  await flush();
  expect(started).toEqual([0, 1, 2]);
  gates[0]!.open();
  gates[2]!.open();
  gates[3]!.open();
  await Promise.all(runs);
  expect(started).toEqual([0, 1, 2, 3]);
  expect(limiter.load).toEqual({ running: 0, waiting: 0 });
});

test("a full line refuses at once; a task that cannot start by its deadline is refused then; neither runs", async () => {
  const clock = new ManualClock();
  const limiter = new Limiter({ clock, concurrency: 1, queueLimit: 1 });
  const busy = gate();
  let ran = 0;
  const first = limiter.run(5000, busy.task);
  const waiting = limiter.run(3000, async () => void ran++);
  const caught = waiting.catch((e: unknown) => e);
  await expect(limiter.run(3000, async () => void ran++)).rejects.toMatchObject({
    name: "OverloadedError",
    reason: "full",
    message: "1 reviews running and 1 waiting, the most it holds",
  });
  await clock.advance(2999);
  expect(limiter.load).toEqual({ running: 1, waiting: 1 });
  await clock.advance(1);
  const e = await caught;
  expect(e).toBeInstanceOf(OverloadedError);
  expect(e).toMatchObject({
    reason: "late",
    message: "waited 3000 ms behind 1 running and 0 waiting reviews",
  });
  busy.open();
  await first;
  expect(ran).toBe(0);
  expect(limiter.load).toEqual({ running: 0, waiting: 0 });
  // A task that throws frees its slot too.
  await expect(limiter.run(0, () => Promise.reject(new Error("boom")))).rejects.toThrow("boom");
  expect(await limiter.run(0, async () => "ok")).toBe("ok");
});
