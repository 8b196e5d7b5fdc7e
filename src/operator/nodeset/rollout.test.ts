import fc from "fast-check";
import { maxConcurrentOf } from "../../api";
import { planRollout, type RolloutNode } from "./rollout";

const node = (name: string, o: Partial<RolloutNode> = {}): RolloutNode => ({
  name,
  current: false,
  ready: true,
  ...o,
});
const done = (name: string) => node(name, { current: true, ready: true });
const flying = (name: string) => node(name, { current: true, ready: false });
const failed = (name: string, failure = "lvcreate exited 5") =>
  node(name, { current: true, ready: false, failure });
const old = (name: string) => node(name);
const policy = (maxConcurrent: number, pauseOnFailure = true) => ({ maxConcurrent, pauseOnFailure });

describe("planRollout", () => {
  test.each([
    [
      "nothing current: the first maxConcurrent by name",
      [old("n3"), old("n1"), old("n2")],
      policy(2),
      [],
      ["n1", "n2"],
      [],
      0,
      [],
    ],
    [
      "two in flight, max 2: none admitted",
      [flying("n1"), flying("n2"), old("n3")],
      policy(2),
      [],
      [],
      [],
      0,
      ["n1", "n2"],
    ],
    [
      "one done, one in flight: one more",
      [done("n1"), flying("n2"), old("n3"), old("n4")],
      policy(2),
      [],
      ["n3"],
      [],
      1,
      ["n2"],
    ],
    [
      "a failure pauses: nothing admitted, the node named",
      [done("n1"), done("n2"), failed("n3"), flying("n4"), old("n5"), old("n6")],
      policy(2),
      [],
      [],
      [{ node: "n3", message: "lvcreate exited 5" }],
      2,
      ["n3", "n4"],
    ],
    [
      "a skipped failure is finished: the rollout goes on",
      [done("n1"), done("n2"), failed("n3"), old("n4"), old("n5")],
      policy(2),
      ["n3"],
      ["n4", "n5"],
      [],
      2,
      [],
    ],
    [
      "without pauseOnFailure a failure is finished",
      [failed("n1"), old("n2"), old("n3")],
      policy(2, false),
      [],
      ["n2", "n3"],
      [],
      0,
      [],
    ],
    [
      "maxConcurrent lowered below those in flight: none admitted",
      [flying("n1"), flying("n2"), flying("n3"), old("n4")],
      policy(1),
      [],
      [],
      [],
      0,
      ["n1", "n2", "n3"],
    ],
    ["all done: nothing to do", [done("a"), done("b")], policy(1), [], [], [], 2, []],
  ] as const)("%s", (_name, nodes, p, skipped, admit, pausedBy, updated, updating) => {
    expect(planRollout(nodes, p, new Set(skipped))).toEqual({ admit, pausedBy, updated, updating });
  });
});

describe("maxConcurrentOf", () => {
  test.each([
    [2, 6, 2],
    ["10%", 6, 1],
    ["10%", 1000, 100],
    ["10%", 1001, 101],
    ["1%", 1, 1],
    ["100%", 7, 7],
    ["50%", 0, 1],
  ] as const)("%s of %i nodes is %i", (max, total, n) => expect(maxConcurrentOf(max, total)).toBe(n));
});

/** A set's nodes in any state, with unique names. */
const nodesArb = fc
  .uniqueArray(
    fc.record({
      name: fc.stringMatching(/^n[0-9]{1,3}$/),
      current: fc.boolean(),
      ready: fc.boolean(),
      failure: fc.option(fc.constant("apply failed"), { nil: undefined }),
    }),
    { selector: (n) => n.name, maxLength: 40 },
  )
  .map((ns) =>
    ns.map((n): RolloutNode =>
      n.failure === undefined ? { name: n.name, current: n.current, ready: n.ready } : n,
    ),
  );

describe("planRollout properties", () => {
  const arbs = [
    nodesArb,
    fc.integer({ min: 1, max: 12 }),
    fc.boolean(),
    fc.shuffledSubarray(["n1", "n2", "n3", "n10"]),
  ] as const;

  test("never more than maxConcurrent in flight after admitting (unless already more)", () => {
    fc.assert(
      fc.property(...arbs, (nodes, max, pause, skipped) => {
        const d = planRollout(nodes, policy(max, pause), new Set(skipped));
        if (d.admit.length) expect(d.updating.length + d.admit.length).toBeLessThanOrEqual(max);
      }),
    );
  });

  test("stable order: the admitted are the first not-current nodes by name, whatever the input order", () => {
    fc.assert(
      fc.property(...arbs, fc.integer(), (nodes, max, pause, skipped, seed) => {
        const d = planRollout(nodes, policy(max, pause), new Set(skipped));
        const waiting = nodes
          .filter((n) => !n.current)
          .map((n) => n.name)
          .sort();
        expect(d.admit).toEqual(waiting.slice(0, d.admit.length));
        const shuffled = [...nodes].sort(() => ((seed = (seed * 1103515245 + 12345) | 0) & 1 ? 1 : -1));
        expect(planRollout(shuffled, policy(max, pause), new Set(skipped))).toEqual(d);
      }),
    );
  });

  test("paused means no new admissions", () => {
    fc.assert(
      fc.property(...arbs, (nodes, max, pause, skipped) => {
        const d = planRollout(nodes, policy(max, pause), new Set(skipped));
        if (d.pausedBy.length) expect(d.admit).toEqual([]);
        // and a failure pauses exactly when pauseOnFailure is on and it was not skipped
        const unskipped = nodes.some((n) => n.current && !n.ready && n.failure && !skipped.includes(n.name));
        expect(d.pausedBy.length > 0).toBe(pause && unskipped);
      }),
    );
  });
});
