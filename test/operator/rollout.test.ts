/**
 * A staged rollout over six nodes: a real kube-apiserver, the operator in this process, and for
 * each node the REAL agent code over a FakeNode (test/support/agent/fake-agents.ts: its lvm
 * commands and planner are stood in, the agent service, its HTTP API and the operator's driver are
 * not). maxConcurrent 2; n2's apply is held so the window slides (n1 done → n3 admitted while n2
 * is still applying); n3's pvcreate of the new device fails.
 *
 *   npx jest test/operator/rollout --selectProjects integration
 */
import type { Json } from "../env/cluster";
import { useFakeAgentCluster } from "./fake-agent-cluster";
import { eventually, lvmNodes, must, setsPath, sleep, volumeGroupNodeSet } from "./env";

jest.setTimeout(180_000);

const NS = "storage";
const NODES = ["n1", "n2", "n3", "n4", "n5", "n6"];
const c = useFakeAgentCluster({
  nodes: NODES,
  namespaces: [NS],
  resyncMs: 2000,
  events: true,
  devices: ["/dev/vdb", "/dev/vdc", "/dev/vdd"],
});

const paths = (o: Json) =>
  o.spec.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions[0].values;
const readyAtGeneration = (o: Json) =>
  (o.status?.conditions ?? []).some(
    (x: Json) => x.type === "Ready" && x.status === "True" && x.observedGeneration === o.metadata.generation,
  );
const getSet = () => must(c.cp, "GET", setsPath(NS, "fleet"));
const setTemplatePaths = async (devices: string[]) => {
  const set = await getSet();
  set.spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions[0].values =
    devices;
  await must(c.cp, "PUT", setsPath(NS, "fleet"), set);
};
const touched = (node: string, device: string) =>
  c.agents.agents
    .get(node)!
    .fake.commands.filter((a) => a.includes(device))
    .map((a) => a.join(" "));

/** Polls the LVMNodes while `until` is false; the most nodes seen at once given `devices` and not yet Ready. */
async function maxInFlight(
  devices: string[],
  until: () => Promise<boolean>,
  ms: number,
  except: readonly string[] = [],
): Promise<number> {
  let most = 0;
  await eventually(
    "the rollout reaches its point",
    async () => {
      const nodes = [...(await lvmNodes(c.cp, NS)).values()];
      const flying = nodes.filter(
        (o) =>
          canonicalPaths(o) === devices.join() && !readyAtGeneration(o) && !except.includes(o.metadata.name),
      );
      most = Math.max(most, flying.length);
      return until();
    },
    ms,
    100,
  );
  return most;
}
const canonicalPaths = (o: Json) => (paths(o) as string[]).join();

test("a template change reaches 2 nodes at a time; n3's failure pauses it before n4; the resume annotation passes over n3; fixing the spec completes it", async () => {
  const set = volumeGroupNodeSet(NS, "fleet", { devices: ["/dev/vdb"] });
  set.spec.rollout = { maxConcurrent: 2 };
  await must(c.cp, "POST", setsPath(NS), set);
  await eventually("all 6 Ready", async () => (await getSet()).status?.readyNodes === 6, 60_000);

  // n2 holds its apply of the new device until released; n3's pvcreate of it fails.
  let release!: () => void;
  const held = new Promise<void>((r) => (release = r));
  c.agents.agents.get("n2")!.fake.beforeRun = (argv) =>
    argv.includes("/dev/vdc") ? held : Promise.resolve();
  c.agents.agents.get("n3")!.fake.failOn = "pvcreate /dev/vdc";

  await setTemplatePaths(["/dev/vdb", "/dev/vdc"]);
  const paused = (s: Json) =>
    (s.status?.conditions ?? []).find((x: Json) => x.type === "RolloutPaused" && x.status === "True");
  let most: number;
  try {
    most = await maxInFlight(["/dev/vdb", "/dev/vdc"], async () => !!paused(await getSet()), 60_000);
  } finally {
    release(); // a failed wait must not leave n2's agent hanging through the cluster's stop
  }
  await eventually(
    "n2 applied the change",
    async () => readyAtGeneration((await lvmNodes(c.cp, NS)).get("n2")),
    30_000,
  );
  await sleep(5000); // two resyncs: nothing more is admitted while paused

  const s = await getSet();
  const condition = paused(s);
  expect(condition.message).toContain("node n3 failed to apply it");
  expect(condition.message).toContain("pvcreate /dev/vdc");
  expect(most).toBeLessThanOrEqual(2);
  const nodes = await lvmNodes(c.cp, NS);
  expect(NODES.map((n) => [n, canonicalPaths(nodes.get(n)!)])).toEqual([
    ["n1", "/dev/vdb,/dev/vdc"],
    ["n2", "/dev/vdb,/dev/vdc"],
    ["n3", "/dev/vdb,/dev/vdc"],
    ["n4", "/dev/vdb"],
    ["n5", "/dev/vdb"],
    ["n6", "/dev/vdb"],
  ]);
  for (const n of ["n4", "n5", "n6"]) expect(touched(n, "/dev/vdc")).toEqual([]);
  expect(s.status.rollout).toMatchObject({ updatedNodes: 2, totalNodes: 6, updating: ["n3"] });
  const generation = s.status.rollout.templateGeneration;
  expect(nodes.get("n1")!.status.appliedTemplateGeneration).toBe(generation);
  expect(nodes.get("n4")!.status.appliedTemplateGeneration).toBeLessThan(generation);
  const events = await must(c.cp, "GET", `/apis/events.k8s.io/v1/namespaces/${NS}/events`);
  expect(
    (events.items as Json[]).some((e) => e.reason === "RolloutPaused" && String(e.note).includes("node n3")),
  ).toBe(true);

  // The resume annotation passes over n3, once: n4-n6 get the template, two at a time.
  await must(c.cp, "PATCH", setsPath(NS, "fleet"), {
    metadata: { annotations: { "lvm.topolvm.io/rollout-resume": "1" } },
  });
  const mostResumed = await maxInFlight(
    ["/dev/vdb", "/dev/vdc"],
    async () => (await getSet()).status?.rollout?.updatedNodes === 5,
    60_000,
    ["n3"], // passed over: a finished failure holds no place
  );
  expect(mostResumed).toBeLessThanOrEqual(2);
  const resumed = await getSet();
  expect(resumed.status.rollout).toMatchObject({ updatedNodes: 5, skipped: ["n3"], resumed: "1" });
  expect(resumed.status.conditions.find((x: Json) => x.type === "RolloutPaused")).toMatchObject({
    status: "False",
    reason: "Resumed",
  });

  // The fix: the new device is vdd, not vdc. A new template: the rollout starts over and completes.
  await setTemplatePaths(["/dev/vdb", "/dev/vdd"]);
  const mostAfter = await maxInFlight(
    ["/dev/vdb", "/dev/vdd"],
    async () => {
      const after = await getSet();
      return after.status?.rollout?.updatedNodes === 6 && after.status.readyNodes === 6;
    },
    90_000,
  );
  expect(mostAfter).toBeLessThanOrEqual(2);
  const done = await getSet();
  expect(done.status.conditions.find((x: Json) => x.type === "RolloutPaused")).toMatchObject({
    status: "False",
  });
  const after = await lvmNodes(c.cp, NS);
  for (const n of NODES) {
    expect(canonicalPaths(after.get(n)!)).toBe("/dev/vdb,/dev/vdd");
    expect(after.get(n)!.status.appliedTemplateGeneration).toBe(done.status.rollout.templateGeneration);
    expect(c.agents.agents.get(n)!.fake.pvs.has("/dev/vdd")).toBe(true);
  }
});
