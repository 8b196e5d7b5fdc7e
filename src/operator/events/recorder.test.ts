import { dnsSubdomainProblem } from "../../api/names";
import { FakeKube } from "../../../test/support/kube/fake-kube";
import { flush, ManualClock } from "../../../test/support/kube/manual-clock";
import { EVENTS, EventRecorder, type EventInput } from "./recorder";

const n1 = {
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNode",
  metadata: { name: "n1", namespace: "storage", uid: "u1" },
};
const n2 = { ...n1, metadata: { ...n1.metadata, name: "n2", uid: "u2" } };
const failed = (regarding = n1, note = "node n1: vgextend vg1 /dev/vdc: exit 5"): EventInput => ({
  regarding,
  type: "Warning",
  reason: "ApplyFailed",
  action: "Apply",
  note,
});

let clock: ManualClock;
let kube: FakeKube;
let rec: EventRecorder;
beforeEach(() => {
  clock = new ManualClock();
  kube = new FakeKube();
  rec = new EventRecorder({ kube, clock, log: () => undefined, instance: "op-a" });
});

const stored = (name: string) =>
  kube.peek<Record<string, unknown> & { metadata: { name: string } }>(EVENTS, "storage", name);

test("an Event as events.k8s.io/v1 has it: regarding, reporting controller and instance, time, note", async () => {
  rec.record(failed());
  await rec.flush();
  expect(kube.writes).toHaveLength(1);
  const name = kube.writes[0]!.object.replace("Event storage/", "");
  expect(name).toMatch(/^n1\.[0-9a-f]+$/);
  expect(stored(name)).toMatchObject({
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    eventTime: "2044-10-22T16:29:24.000000Z",
    reportingController: "lvm.topolvm.io/operator",
    reportingInstance: "op-a",
    type: "Warning",
    reason: "ApplyFailed",
    action: "Apply",
    note: "node n1: vgextend vg1 /dev/vdc: exit 5",
    regarding: {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNode",
      namespace: "storage",
      name: "n1",
      uid: "u1",
    },
  });
});

test("the same event again: one series write at the second, then counted in memory and written every 30 minutes", async () => {
  rec.record(failed());
  await rec.flush();
  for (let i = 0; i < 10; i++) {
    await clock.advance(10_000);
    rec.record(failed());
  }
  await rec.flush();
  expect(kube.writes.map((w) => w.verb)).toEqual(["CREATE", "PATCH"]);
  expect(kube.writes[1]!.patch).toEqual({
    series: { count: 2, lastObservedTime: "2044-10-22T16:29:34.000000Z" },
  });
  await clock.advance(30 * 60_000);
  await rec.flush();
  expect(kube.writes.map((w) => w.verb)).toEqual(["CREATE", "PATCH", "PATCH"]);
  expect(kube.writes[2]!.patch).toMatchObject({ series: { count: 11 } });
  expect(rec.stats).toMatchObject({ created: 1, seriesWrites: 2, repeats: 10, dropped: 0 });
});

test("another note, or the same after the 6-minute window, is a new Event", async () => {
  rec.record(failed());
  rec.record(failed(n1, "node n1: vgextend vg1 /dev/vdd: exit 5"));
  await clock.advance(6 * 60_000);
  rec.record(failed());
  await rec.flush();
  expect(kube.writes.map((w) => w.verb)).toEqual(["CREATE", "CREATE", "CREATE"]);
});

test("spam filter: 25 events per object at once, then one per 5 minutes; other objects are not held back", async () => {
  for (let i = 0; i < 40; i++) rec.record(failed(n1, `note ${i}`));
  rec.record(failed(n2));
  await rec.flush();
  expect(kube.writes.filter((w) => w.object.startsWith("Event storage/n1."))).toHaveLength(25);
  expect(kube.writes.filter((w) => w.object.startsWith("Event storage/n2."))).toHaveLength(1);
  expect(rec.stats.dropped).toBe(15);
  await clock.advance(5 * 60_000);
  rec.record(failed(n1, "later 1"));
  rec.record(failed(n1, "later 2"));
  await rec.flush();
  expect(kube.writes.filter((w) => w.object.startsWith("Event storage/n1."))).toHaveLength(26);
});

test("a failing write is logged, never thrown; a note over 1 kB is cut", async () => {
  const logs: Array<Record<string, unknown>> = [];
  const failing = new EventRecorder({
    kube: {
      ...kube,
      create: async () => Promise.reject(new Error("HTTP 403 Forbidden")),
    } as unknown as FakeKube,
    clock,
    log: (e) => logs.push(e),
    instance: "op-a",
  });
  expect(() => failing.record(failed())).not.toThrow();
  await failing.flush();
  expect(logs).toEqual([{ msg: "event not recorded", reason: "ApplyFailed", error: "HTTP 403 Forbidden" }]);
  rec.record(failed(n1, "x".repeat(5000)));
  await rec.flush();
  const name = kube.writes[0]!.object.replace("Event storage/", "");
  expect(String(stored(name)!.note)).toHaveLength(1024);
  await flush();
});

test("an object with a 253-character name (a Node's longest): the Event's name is cut to a valid one", async () => {
  const long = `${"a".repeat(62)}.${"b".repeat(62)}.${"c".repeat(62)}.${"d".repeat(62)}.e`; // 253
  expect(long).toHaveLength(253);
  rec.record(failed({ ...n1, metadata: { ...n1.metadata, name: long } }));
  // Cut where a '-' is left last: it goes too.
  rec.record(failed({ ...n1, metadata: { ...n1.metadata, name: `${"x".repeat(238)}-${"y".repeat(14)}` } }));
  await rec.flush();
  const names = kube.writes.map((w) => w.object.replace("Event storage/", ""));
  expect(names.map((n) => [n.length <= 253, dnsSubdomainProblem(n)])).toEqual([
    [true, undefined],
    [true, undefined],
  ]);
  expect(names[0]).toMatch(/^a{62}\.b{62}\.c{62}\.d{45}[^.]*\.[0-9a-f]+$/);
  expect(stored(names[0]!)).toMatchObject({ regarding: { name: long } });
});
