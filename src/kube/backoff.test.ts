import fc from "fast-check";
import { backoffDelay } from "./backoff";

describe("backoffDelay", () => {
  test.each([
    [0, 100],
    [1, 200],
    [3, 800],
    [4, 1000],
    [1000, 1000],
  ])("attempt %i waits %i ms (base 100, cap 1000)", (attempt, ms) => {
    expect(backoffDelay(attempt, { baseMs: 100, capMs: 1000 })).toBe(ms);
  });

  test("defaults: 500 ms doubling up to 30 s", () => {
    expect(backoffDelay(0)).toBe(500);
    expect(backoffDelay(20)).toBe(30_000);
  });

  test("never decreases and never passes the cap", () => {
    fc.assert(
      fc.property(
        fc.nat(200),
        fc.integer({ min: 1, max: 10_000 }),
        fc.integer({ min: 1, max: 1e6 }),
        (n, base, cap) => {
          const a = backoffDelay(n, { baseMs: base, capMs: cap });
          expect(a).toBeLessThanOrEqual(cap);
          expect(backoffDelay(n + 1, { baseMs: base, capMs: cap })).toBeGreaterThanOrEqual(a);
        },
      ),
    );
  });
});
