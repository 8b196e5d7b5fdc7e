/**
 * Kubernetes Events from the operator (issue 17) on a REAL kube-apiserver: an apply that fails
 * on a node is an ApplyFailed Event with the step and the lvm error, repeated failures are one
 * Event with a series count, the recovery is an Applied Event, and a resync that changes nothing
 * records none. The agents are the real agent code over FakeNodes, in this process.
 *
 *   npx jest test/operator/events --selectProjects integration --runInBand
 */
import { systemClock } from "../../src/kube/clock";
import { createKubeClient } from "../../src/kube/client";
import { EventRecorder } from "../../src/operator/events/recorder";
import type { Json } from "../env/cluster";
import { eventually, must, setsPath, sleep, volumeGroupNodeSet } from "./env";
import { useFakeAgentCluster } from "./fake-agent-cluster";

jest.setTimeout(180_000);

const NS = "storage";
const RESYNC_MS = 2000;
const c = useFakeAgentCluster({
  nodes: ["n1", "n2"],
  namespaces: [NS],
  devices: ["/dev/vdb", "/dev/vdc"],
  resyncMs: RESYNC_MS,
  events: true,
});

const set = (devices: string[]): Json => volumeGroupNodeSet(NS, "fast", { devices });
const events = async (): Promise<Json[]> =>
  (await must(c.cp, "GET", `/apis/events.k8s.io/v1/namespaces/${NS}/events`)).items;
const about = (list: Json[], node: string, reason: string) =>
  list.filter((e) => e.regarding?.name === node && e.reason === reason);
const setReady = async () =>
  (await must(c.cp, "GET", setsPath(NS, "fast"))).status?.conditions?.some(
    (x: Json) => x.type === "Ready" && x.status === "True",
  );

test("a failed apply is an Event with the lvm error, repeats are its series, the recovery is Applied; a no-op resync records none", async () => {
  await must(c.cp, "POST", setsPath(NS), set(["/dev/vdb"]));
  await eventually("set Ready", setReady, 60_000, 100);
  const first = await events();
  for (const n of ["n1", "n2"]) {
    expect(about(first, n, "ApplyStarted")).toHaveLength(1);
    expect(about(first, n, "Applied")).toHaveLength(1);
    expect(about(first, n, "DevicesClaimed")[0]).toMatchObject({
      type: "Normal",
      reportingController: "lvm.topolvm.io/operator",
      reportingInstance: "test-operator",
      regarding: { kind: "LVMNode", namespace: NS, name: n },
      note: expect.stringMatching(/^volume group vg1: \/dev\/vdb \(pv:[^)]+\) now in it$/),
    });
  }

  // n2's lvm fails on the new device; the operator retries (backoff 0.2 s to 2 s).
  c.agents.agents.get("n2")!.fake.failOn = "vgextend vg1 /dev/vdc";
  await must(c.cp, "PATCH", setsPath(NS, "fast"), { spec: set(["/dev/vdb", "/dev/vdc"]).spec });
  // The first apply fails at step 2 (pvcreate /dev/vdc went through), every retry at step 1: two
  // notes, two Events; the retries of the second are its series, not new Events.
  const failed = await eventually(
    "ApplyFailed on n2, repeated as a series",
    async () => {
      const list = about(await events(), "n2", "ApplyFailed");
      const repeated = list.find((e) => e.series?.count >= 2);
      return repeated ? { list, repeated } : undefined;
    },
    60_000,
    200,
  );
  const notes = failed.list.map((e: Json) => e.note as string);
  expect(new Set(notes).size).toBe(notes.length);
  expect(notes.length).toBeLessThanOrEqual(2);
  for (const e of failed.list) {
    expect(e).toMatchObject({ type: "Warning", action: "Apply", regarding: { kind: "LVMNode", name: "n2" } });
    expect(e.note).toMatch(
      /^POST \/v1\/apply to agent pod lvm-system\/agent-n2 answered HTTP 500: node n2: CommandFailed: step \d \(vgextend\) failed: vgextend vg1 \/dev\/vdc exited 5: fake failure/,
    );
  }
  const appliesToN2 = c.agents.agents.get("n2")!.requests.filter((r) => r === "POST /v1/apply").length;
  console.log(
    `${appliesToN2} applies sent to n2 so far, ${failed.list.length} ApplyFailed Events; series ${JSON.stringify(failed.repeated.series)}`,
  );
  expect(appliesToN2).toBeGreaterThan(failed.list.length);
  // What `kubectl describe lvmnode n2` lists (the core/v1 view of the same Events).
  const core = await must(
    c.cp,
    "GET",
    `/api/v1/namespaces/${NS}/events?fieldSelector=${encodeURIComponent("involvedObject.name=n2,reason=ApplyFailed")}`,
  );
  expect(core.items).toHaveLength(failed.list.length);
  // (events.k8s.io series show there as series.count; core count is the deprecated field)
  expect(Math.max(...core.items.map((e: Json) => e.series?.count ?? e.count ?? 1))).toBeGreaterThanOrEqual(2);

  c.agents.agents.get("n2")!.fake.failOn = undefined;
  await eventually(
    "n2 applied again",
    async () => about(await events(), "n2", "Applied").length === 2 && (await setReady()),
    60_000,
    200,
  );

  // Quiet: three resyncs of both LVMNodes (each a plan and a status call per agent) record nothing.
  await sleep(RESYNC_MS + 500);
  const before = (await events()).map((e) => `${e.metadata.name}:${e.series?.count ?? 1}`).sort();
  const plansBefore = c.agents.agents.get("n1")!.requests.filter((r) => r === "POST /v1/plan").length;
  const writesBefore = c.op!.writes().length;
  await sleep(3 * RESYNC_MS + 500);
  const plans = c.agents.agents.get("n1")!.requests.filter((r) => r === "POST /v1/plan").length - plansBefore;
  expect(plans).toBeGreaterThanOrEqual(3);
  expect((await events()).map((e) => `${e.metadata.name}:${e.series?.count ?? 1}`).sort()).toEqual(before);
  expect(c.op!.writes().slice(writesBefore)).toEqual([]);
  console.log(`no-op: ${plans} resyncs of n1, 0 Events, 0 writes; Events in all: ${before.length}`);
});

test("an LVMNode with a 253-character name (a Node's longest) gets its Events: the API server takes the cut name", async () => {
  const long = `${"a".repeat(62)}.${"b".repeat(62)}.${"c".repeat(62)}.${"d".repeat(62)}.e`;
  const kube = createKubeClient({
    connection: { server: c.cp.url, token: () => c.cp.tokens.operator, ca: () => c.cp.caPem },
  });
  const logs: Array<Record<string, unknown>> = [];
  const recorder = new EventRecorder({
    kube,
    clock: systemClock,
    log: (e) => logs.push(e),
    instance: "test",
  });
  recorder.record({
    regarding: {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNode",
      metadata: { name: long, namespace: NS, uid: "u-long" },
    },
    type: "Normal",
    reason: "Applied",
    action: "Apply",
    note: "the plan is applied",
  });
  await recorder.flush();
  recorder.close();
  expect(logs).toEqual([]);
  const stored = about(await events(), long, "Applied");
  expect(stored).toHaveLength(1);
  expect(stored[0].metadata.name.length).toBeLessThanOrEqual(253);
});
