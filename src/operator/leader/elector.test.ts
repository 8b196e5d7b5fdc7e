import type { KubeClient } from "../../kube/client";
import { KubeApiError } from "../../kube/errors";
import { FakeKube } from "../../../test/support/kube/fake-kube";
import { flush, ManualClock } from "../../../test/support/kube/manual-clock";
import { LeaderElector, type TermEnd } from "./elector";
import { LEASES, microTime, type LeaseObject } from "./lease";
import { leaderOnlyAgentChanges, leaderOnlyWrites, NotLeaderError } from "./write-gate";
import type { AgentClient } from "../../agent-client/agent-client";
import { LVM_NODES } from "../../kube/resources";

const NS = "lvm-system";
const NAME = "pulumi-lvm-operator";

/** A client over `kube` that a test can cut off: requests fail (no answer) or hang. */
function cuttable(kube: KubeClient): KubeClient & { mode: "ok" | "fail" | "hang" } {
  const c = {
    mode: "ok" as "ok" | "fail" | "hang",
    async go<T>(f: () => Promise<T>): Promise<T> {
      if (c.mode === "fail") throw new KubeApiError("GET", "Lease", 0, "", "connection refused");
      if (c.mode === "hang") return new Promise<T>(() => undefined);
      return f();
    },
  };
  return Object.assign(c, {
    get: ((r, ns, n) => c.go(() => kube.get(r, ns, n))) as KubeClient["get"],
    list: kube.list.bind(kube),
    watch: kube.watch.bind(kube),
    create: ((r, ns, b) => c.go(() => kube.create(r, ns, b))) as KubeClient["create"],
    createSubresource: kube.createSubresource.bind(kube),
    patch: ((r, ns, n, p, s) => c.go(() => kube.patch(r, ns, n, p, s))) as KubeClient["patch"],
    delete: kube.delete.bind(kube),
  });
}

interface Replica {
  readonly elector: LeaderElector;
  readonly kube: ReturnType<typeof cuttable>;
  readonly stop: AbortController;
  readonly ended: Promise<TermEnd>;
  /** When lead() started and when its signal aborted (clock ms). */
  readonly term: { started?: number; aborted?: number; finished?: number };
  /** How long lead() takes after its signal aborts (an apply in flight). */
  linger: number;
}

function replica(kube: FakeKube, clock: ManualClock, identity: string, random = () => 0): Replica {
  const cut = cuttable(kube);
  const elector = new LeaderElector({
    kube: cut,
    clock,
    log: () => undefined,
    namespace: NS,
    name: NAME,
    identity,
    random,
  });
  const stop = new AbortController();
  const term: Replica["term"] = {};
  const r: Replica = {
    elector,
    kube: cut,
    stop,
    term,
    linger: 0,
    ended: elector.run(stop.signal, async (signal) => {
      term.started = clock.now();
      await new Promise<void>((res) => signal.addEventListener("abort", () => res(), { once: true }));
      term.aborted = clock.now();
      if (r.linger > 0) await new Promise<void>((res) => clock.setTimer(r.linger, res));
      term.finished = clock.now();
    }),
  };
  return r;
}

const lease = (kube: FakeKube) => kube.peek<LeaseObject>(LEASES, NS, NAME)?.spec;

let clock: ManualClock;
let kube: FakeKube;
beforeEach(() => {
  clock = new ManualClock();
  kube = new FakeKube();
});

test("the first replica creates the Lease and leads; it renews every retry period and keeps it", async () => {
  const a = replica(kube, clock, "a");
  await flush();
  expect(a.elector.isLeader()).toBe(true);
  expect(a.term.started).toBe(clock.now());
  expect(lease(kube)).toEqual({
    holderIdentity: "a",
    leaseDurationSeconds: 15,
    acquireTime: microTime(clock.now()),
    renewTime: microTime(clock.now()),
    leaseTransitions: 0,
  });
  const t0 = clock.now();
  await clock.advance(60_000);
  expect(a.elector.isLeader()).toBe(true);
  expect(lease(kube)).toMatchObject({ holderIdentity: "a", acquireTime: microTime(t0), leaseTransitions: 0 });
  expect(Date.parse(lease(kube)!.renewTime!)).toBeGreaterThan(t0 + 55_000);
  const renewals = kube.writes.filter((w) => w.object.startsWith("Lease")).length;
  expect(renewals).toBeGreaterThanOrEqual(30); // one per 2 s
  a.stop.abort();
  await clock.advance(0);
  expect(await a.ended).toBe("stopped");
});

test("a standby waits while the leader renews, and never leads at the same time", async () => {
  const a = replica(kube, clock, "a");
  await flush();
  const b = replica(kube, clock, "b");
  for (let i = 0; i < 60; i++) {
    await clock.advance(1000);
    expect([a.elector.isLeader(), b.elector.isLeader()]).toEqual([true, false]);
  }
  expect(b.elector.holder()).toBe("a");
  expect(b.term.started).toBeUndefined();
});

test("a leader killed (no renewal, no release): the standby takes over after the lease duration as it observed it", async () => {
  // A Lease left by a leader that died: renewed "now" on its own clock (which may differ from ours).
  kube.put(LEASES, {
    metadata: { name: NAME, namespace: NS },
    spec: {
      holderIdentity: "dead",
      leaseDurationSeconds: 15,
      acquireTime: microTime(0),
      renewTime: microTime(0), // far in the past on our clock: must not count
      leaseTransitions: 3,
    },
  } as LeaseObject);
  const seenAt = clock.now();
  const b = replica(kube, clock, "b");
  await flush();
  await clock.advance(14_900);
  expect(b.elector.isLeader()).toBe(false);
  await clock.advance(2_500); // the first try at or after 15 s
  expect(b.elector.isLeader()).toBe(true);
  expect(b.term.started! - seenAt).toBeGreaterThanOrEqual(15_000);
  expect(b.term.started! - seenAt).toBeLessThanOrEqual(17_000);
  expect(lease(kube)).toMatchObject({ holderIdentity: "b", leaseTransitions: 4 });
});

test.each(["fail", "hang"] as const)(
  "a leader that cannot renew (requests %s) stops at the renew deadline, before anyone else can lead",
  async (mode) => {
    const a = replica(kube, clock, "a");
    await flush();
    const b = replica(kube, clock, "b");
    await clock.advance(5000);
    a.kube.mode = mode;
    const lastRenewal = Date.parse(lease(kube)!.renewTime!);
    const gated = leaderOnlyWrites(kube, () => a.elector.isLeader(), "a");
    // Step in 100 ms and record when a stops and when b starts.
    let aStopped: number | undefined;
    let bStarted: number | undefined;
    for (let t = 0; t < 30_000; t += 100) {
      await clock.advance(100);
      if (aStopped === undefined && !a.elector.isLeader()) aStopped = clock.now();
      if (bStarted === undefined && b.elector.isLeader()) bStarted = clock.now();
      expect(a.elector.isLeader() && b.elector.isLeader()).toBe(false);
    }
    expect(aStopped! - lastRenewal).toBeLessThanOrEqual(10_000);
    expect(a.term.aborted).toBeLessThanOrEqual(lastRenewal + 10_000);
    expect(bStarted! - lastRenewal).toBeGreaterThanOrEqual(15_000);
    expect(bStarted! - aStopped!).toBeGreaterThanOrEqual(5_000);
    await expect(gated.patch(LVM_NODES, "storage", "n1", {})).rejects.toThrow(NotLeaderError);
    expect(await a.ended).toBe("lost");
  },
);

test("a leader whose wall clock steps back 60 s while its renewals fail still stops at the renew deadline (monotonic time)", async () => {
  // Two machines: A's clock and B's clock, advanced together; only A's wall clock is stepped.
  const clockA = new ManualClock();
  const a = replica(kube, clockA, "a");
  await flush();
  const b = replica(kube, clock, "b");
  const both = async (ms: number) => {
    for (let t = 0; t < ms; t += 100) {
      await clockA.advance(100);
      await clock.advance(100);
    }
  };
  await both(5000);
  expect(a.elector.isLeader()).toBe(true);
  const lastRenewal = Date.parse(lease(kube)!.renewTime!); // A's wall clock equals its monotonic one so far
  a.kube.mode = "fail";
  clockA.step(-60_000);
  const gated = leaderOnlyWrites(kube, () => a.elector.isLeader(), "a");
  let aStopped: number | undefined;
  let bStarted: number | undefined;
  let bothLed = 0;
  for (let t = 0; t < 80_000; t += 100) {
    await both(100);
    const aWrites = await gated.patch(LVM_NODES, "storage", "n1", {}).then(
      () => true,
      (e: unknown) => !(e instanceof NotLeaderError),
    );
    if (aStopped === undefined && !aWrites) aStopped = clockA.monotonic();
    if (bStarted === undefined && b.elector.isLeader()) bStarted = clockA.monotonic();
    if (aWrites && b.elector.isLeader()) bothLed += 100;
  }
  const stoppedAfterMs = aStopped! - lastRenewal;
  expect({
    stoppedWithinRenewDeadline: stoppedAfterMs <= 10_000,
    stoppedAfterMs,
    bothLedMs: bothLed,
  }).toEqual({
    stoppedWithinRenewDeadline: true,
    stoppedAfterMs,
    bothLedMs: 0,
  });
  expect(bStarted! - aStopped!).toBeGreaterThanOrEqual(5_000);
  expect(await a.ended).toBe("lost");
});

test("stop: the term ends, the Lease is renewed until the apply in flight is answered, then released; the standby takes over at its next try", async () => {
  const a = replica(kube, clock, "a");
  await flush();
  const b = replica(kube, clock, "b");
  await clock.advance(3000);
  a.linger = 25_000; // an apply the stop waits for, longer than the lease
  a.stop.abort();
  await flush();
  await clock.advance(24_000);
  expect(a.term.aborted).toBeDefined();
  expect(a.term.finished).toBeUndefined();
  expect([a.elector.isLeader(), b.elector.isLeader(), lease(kube)?.holderIdentity]).toEqual([
    true,
    false,
    "a",
  ]);
  await clock.advance(1000);
  expect(a.term.finished).toBeDefined();
  expect(await a.ended).toBe("stopped");
  const releases = kube.calls.filter(
    (c) => (c.patch as { spec?: { holderIdentity?: string } })?.spec?.holderIdentity === "",
  );
  expect(releases).toHaveLength(1);
  expect(releases[0]!.patch).toMatchObject({ spec: { holderIdentity: "", leaseDurationSeconds: 1 } });
  for (let t = 0; t < 3000 && !b.elector.isLeader(); t += 100) await clock.advance(100);
  expect(b.elector.isLeader()).toBe(true);
  expect(b.term.started! - a.term.finished!).toBeLessThanOrEqual(2400); // retry 2 s + at most 20 % jitter
  expect(lease(kube)).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
});

test("the write gate: writes only while leading, reads always", async () => {
  kube.put(LVM_NODES, { metadata: { name: "n1", namespace: "storage" } });
  let leads = false;
  const gated = leaderOnlyWrites(kube, () => leads, "me");
  await expect(gated.patch(LVM_NODES, "storage", "n1", { metadata: { labels: { a: "b" } } })).rejects.toThrow(
    "PATCH LVMNode storage/n1: not sent: this replica (me) does not hold the leader Lease, or did not renew it in time",
  );
  expect(await gated.get(LVM_NODES, "storage", "n1")).toBeDefined();
  expect(kube.writes).toEqual([]);
  leads = true;
  await gated.patch(LVM_NODES, "storage", "n1", { metadata: { labels: { a: "b" } } });
  expect(kube.writes).toHaveLength(1);
});

test("durations must be lease > renew deadline > retry > 0", () => {
  expect(
    () =>
      new LeaderElector({
        kube,
        clock,
        log: () => undefined,
        namespace: NS,
        name: NAME,
        identity: "a",
        leaseDurationMs: 10_000,
        renewDeadlineMs: 10_000,
      }),
  ).toThrow(
    "leader election needs lease duration > renew deadline > retry period > 0 (got 10000 ms, 10000 ms, 2000 ms)",
  );
});

test("the agent gate: apply and teardown only while leading (Aborted otherwise), plan and status always", async () => {
  const sent: string[] = [];
  const client = {
    plan: async () => (sent.push("plan"), {}),
    status: async () => (sent.push("status"), {}),
    apply: async () => (sent.push("apply"), {}),
    teardown: async () => (sent.push("teardown"), {}),
  } as unknown as AgentClient;
  let leads = false;
  const gated = leaderOnlyAgentChanges(client, () => leads, "me");
  const ep = { node: "n1", url: "http://x", token: "t" };
  await gated.plan(ep, { volumeGroups: [] });
  await gated.status(ep);
  await expect(gated.apply(ep, { volumeGroups: [] }, "h")).rejects.toMatchObject({
    code: "Aborted",
    message: "node n1: POST /v1/apply not sent: this replica (me) does not hold the leader Lease",
  });
  await expect(gated.teardown(ep, { volumeGroups: [] })).rejects.toMatchObject({ code: "Aborted" });
  expect(sent).toEqual(["plan", "status"]);
  leads = true;
  await gated.apply(ep, { volumeGroups: [] }, "h");
  expect(sent).toEqual(["plan", "status", "apply"]);
});
