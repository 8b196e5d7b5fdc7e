/**
 * startCluster's one retry (boot-retry.ts), with stand-in boots: a TCG soft lockup cannot be caused
 * on demand, so what is tested here is the decision. The errors are written by guest.ts's own
 * message builders (callFailed, noAnswer), so a change to those words fails this file.
 */
import { bootOnceMoreIfGuestHung } from "./boot-retry";
import { callFailed, guestStoppedAnswering, noAnswer } from "../vm/guest";

interface Booted {
  readonly n: number;
  readonly timings: Readonly<Record<string, number>>;
}

/** A guest call that timed out, as guest.ts throws it (its diagnostics after the first line). */
const hang = () =>
  new Error(
    `${callFailed("pl-cluster", "GET", "/processes", noAnswer(30_000))}\nconsole:\n[ 61.2] watchdog: BUG: soft lockup`,
  );

/** A boot that throws `outcomes[i]` on its i-th call, or succeeds when that is undefined. */
function bootsThat(...outcomes: (Error | undefined)[]) {
  let calls = 0;
  const boot = async (): Promise<Booted> => {
    const outcome = outcomes[calls++];
    if (outcome) throw outcome;
    return { n: calls, timings: { nodeReady: 1000 } };
  };
  return { boot, calls: () => calls };
}

describe("guestStoppedAnswering", () => {
  it.each([
    ["a call that got no answer", hang(), true],
    [
      "the same error quoted by another on a line of its own",
      new Error(`containerd did not start:\n${hang().message}`),
      true,
    ],
    [
      "a refused connection",
      new Error(callFailed("pl-cluster", "POST", "/exec", "connect ECONNREFUSED 127.0.0.1:10999")),
      false,
    ],
    ["an HTTP error", new Error('guest pl-cluster: POST /exec → HTTP 500: "boom"'), false],
    ["a guest that exited", new Error("guest pl-cluster is not running\nqemu exit 1"), false],
    ["the words inside another line", new Error(`kubelet said: ${hang().message}`), false],
    ["not an Error", hang().message, false],
  ])("%s", (_what, e, expected) => {
    expect(guestStoppedAnswering(e)).toBe(expected);
  });
});

describe("bootOnceMoreIfGuestHung", () => {
  const said: string[] = [];
  const say = (text: string) => said.push(text);
  beforeEach(() => (said.length = 0));

  it("a first boot that works is the only one, and nothing is said", async () => {
    const b = bootsThat(undefined);
    const c = await bootOnceMoreIfGuestHung(b.boot, say);
    expect([b.calls(), c.n, c.timings]).toEqual([1, 1, { nodeReady: 1000 }]);
    expect(said).toEqual([]);
  });

  it("a guest that stopped answering: booted once more, said loudly with the first failure, timed", async () => {
    const clock = [5000, 47_000];
    const b = bootsThat(hang(), undefined);
    const c = await bootOnceMoreIfGuestHung(b.boot, say, () => clock.shift()!);
    expect([b.calls(), c.n]).toEqual([2, 2]);
    expect(c.timings).toEqual({ nodeReady: 1000, rebootedAfterGuestHang: 42_000 });
    expect(said).toHaveLength(1);
    expect(said[0]).toContain("THE GUEST STOPPED ANSWERING");
    expect(said[0]).toContain("GET /processes failed: no answer in 30000 ms");
  });

  it("any other failure is thrown as it is, without a second boot", async () => {
    const other = new Error("kubelet did not register the node in 300 s");
    const b = bootsThat(other, undefined);
    await expect(bootOnceMoreIfGuestHung(b.boot, say)).rejects.toBe(other);
    expect(b.calls()).toBe(1);
    expect(said).toEqual([]);
  });

  it("a second hang fails the caller: no third boot", async () => {
    const second = hang();
    const b = bootsThat(hang(), second, undefined);
    await expect(bootOnceMoreIfGuestHung(b.boot, say)).rejects.toBe(second);
    expect(b.calls()).toBe(2);
  });
});
