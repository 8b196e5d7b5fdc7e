import { ApiReachability } from "./api-reachability";
import { KubeApiError } from "../kube/errors";
import { ManualClock } from "../../test/support/kube/manual-clock";

const unreachable = () => new KubeApiError("GET", "LVMNodes", 0, "", "connect ECONNREFUSED 127.0.0.1:6443");

test("one log line when the API server stops answering, one when it answers again; nothing in between", async () => {
  const clock = new ManualClock(0);
  const logs: Array<Record<string, unknown>> = [];
  const api = new ApiReachability(clock, (e) => logs.push(e));
  api.record();
  for (let i = 0; i < 50; i++) api.record(unreachable());
  expect(api.reachable).toBe(false);
  let resumed = false;
  const waiting = api.whenReachable().then(() => (resumed = true));
  await clock.advance(30_000);
  // An HTTP error is an answer: the API server is back.
  api.record(new KubeApiError("GET", "LVMNodes", 410, "Expired", "too old"));
  await waiting;
  expect(resumed).toBe(true);
  expect(logs).toEqual([
    {
      msg: "API server unreachable; reconciles wait, watches reconnect with backoff",
      error: expect.stringContaining("ECONNREFUSED"),
    },
    { msg: "API server reachable again", unreachableSeconds: 30, failedRequests: 50 },
  ]);
});

test("whenReachable resolves at once when reachable, and when the operator stops", async () => {
  const api = new ApiReachability(new ManualClock(0), () => {});
  await api.whenReachable();
  api.record(unreachable());
  const stop = new AbortController();
  const waiting = api.whenReachable(stop.signal);
  stop.abort();
  await waiting;
  expect(api.reachable).toBe(false);
});

test("while unreachable, one probe after a backoff (0.5 s, 1 s, 2 s ...); its answer ends the outage", async () => {
  const clock = new ManualClock(0);
  let probes = 0;
  let up = false;
  const api = new ApiReachability(
    clock,
    () => {},
    async () => {
      probes++;
      if (!up) throw unreachable();
    },
  );
  api.record(unreachable());
  await clock.advance(499);
  expect(probes).toBe(0);
  await clock.advance(1);
  expect(probes).toBe(1);
  await clock.advance(1000);
  expect(probes).toBe(2);
  up = true;
  await clock.advance(2000);
  expect(probes).toBe(3);
  expect(api.reachable).toBe(true);
  await clock.advance(60_000);
  expect(probes).toBe(3);
});

test("waiters released by the API server's answer leave no listener on the operator's stop signal", async () => {
  const { EventEmitter } = await import("node:events");
  const api = new ApiReachability(new ManualClock(0), () => {});
  const stop = new AbortController();
  for (let outage = 0; outage < 3; outage++) {
    api.record(unreachable());
    const waiting = Array.from({ length: 20 }, () => api.whenReachable(stop.signal));
    api.record();
    await Promise.all(waiting);
  }
  // Before: 60 listeners (20 per outage), and node's MaxListenersExceededWarning in the operator's log.
  expect(EventEmitter.getEventListeners(stop.signal, "abort")).toHaveLength(0);
});
