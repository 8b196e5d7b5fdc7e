import { EventEmitter } from "node:events";
import { catchStopSignals, whenAborted } from "./stop-signal";

test.each(["SIGTERM", "SIGINT"] as const)(
  "%s aborts the signal, with the signal's name as reason",
  (name) => {
    const source = new EventEmitter();
    const stops = catchStopSignals(source);
    expect(stops.signal.aborted).toBe(false);
    source.emit(name);
    expect(stops.signal.aborted).toBe(true);
    expect(stops.signal.reason).toBe(name);
    // Both handlers are gone after the first signal: a second SIGTERM is not caught here.
    expect(source.listenerCount("SIGTERM") + source.listenerCount("SIGINT")).toBe(0);
  },
);

test("dispose removes the handlers and leaves the signal alone", () => {
  const source = new EventEmitter();
  const stops = catchStopSignals(source);
  expect(source.listenerCount("SIGTERM")).toBe(1);
  stops.dispose();
  source.emit("SIGTERM");
  expect(source.listenerCount("SIGTERM") + source.listenerCount("SIGINT")).toBe(0);
  expect(stops.signal.aborted).toBe(false);
});

test("whenAborted resolves at once for an aborted signal and later for a live one", async () => {
  const done = new AbortController();
  done.abort();
  await whenAborted(done.signal);
  const live = new AbortController();
  let resolved = false;
  const waiting = whenAborted(live.signal).then(() => (resolved = true));
  await new Promise((r) => setImmediate(r));
  expect(resolved).toBe(false);
  live.abort();
  await waiting;
  expect(resolved).toBe(true);
});
