/**
 * The top-level Ready condition and the set's node counts (issue 17) on a REAL kube-apiserver, as
 * a node's apply fails and recovers. The agents are the real agent code over FakeNodes, in this
 * process (test/operator/fake-agent-cluster.ts): the point is what the operator writes.
 *
 *   npx jest test/operator/ready --selectProjects integration --runInBand
 */
import type { Json } from "../env/cluster";
import { eventually, lvmNodesPath, must, setsPath, volumeGroupNodeSet } from "./env";
import { useFakeAgentCluster } from "./fake-agent-cluster";

jest.setTimeout(180_000);

const NS = "storage";
const c = useFakeAgentCluster({
  nodes: ["n1", "n2"],
  namespaces: [NS],
  devices: ["/dev/vdb", "/dev/vdc"],
  resyncMs: 60_000,
});

const set = (devices: string[]): Json => volumeGroupNodeSet(NS, "fast", { devices });
const ready = (o: Json) => (o?.status?.conditions ?? []).find((x: Json) => x.type === "Ready");
const counts = (o: Json) => [
  o?.status?.desiredNodes,
  o?.status?.readyNodes,
  o?.status?.degradedNodes,
  o?.status?.failedNodes,
];
const getSet = async () => must(c.cp, "GET", setsPath(NS, "fast"));
const getNode = async (n: string) => must(c.cp, "GET", lvmNodesPath(NS, n));

test("Ready and the counts follow a node whose apply fails, then recovers; observedGeneration says which spec", async () => {
  await must(c.cp, "POST", setsPath(NS), set(["/dev/vdb"]));
  const first = await eventually(
    "the set Ready with 2 of 2 nodes",
    async () => {
      const s = await getSet();
      return ready(s)?.status === "True" && s.status.readyNodes === 2 ? s : undefined;
    },
    60_000,
    100,
  );
  expect(counts(first)).toEqual([2, 2, 0, 0]);
  expect(ready(first)).toMatchObject({
    reason: "Ready",
    message: "2 of 2 LVMNodes are Ready",
    observedGeneration: first.metadata.generation,
  });
  for (const n of ["n1", "n2"])
    expect(ready(await getNode(n))).toMatchObject({ status: "True", reason: "Ready", observedGeneration: 1 });

  // A new device for the group: vgextend on both nodes; n2's lvm fails.
  c.agents.agents.get("n2")!.fake.failOn = "vgextend vg1 /dev/vdc";
  const patched = await must(c.cp, "PATCH", setsPath(NS, "fast"), {
    spec: set(["/dev/vdb", "/dev/vdc"]).spec,
  });
  const failing = await eventually(
    "n2 not Ready, the set counts it",
    async () => {
      const s = await getSet();
      return s.status?.observedGeneration === patched.metadata.generation &&
        ready(s)?.status === "False" &&
        s.status.readyNodes === 1
        ? s
        : undefined;
    },
    60_000,
    100,
  );
  const n2 = await getNode("n2");
  expect(ready(n2)).toMatchObject({ status: "False", reason: "AgentFailed", observedGeneration: 2 });
  expect(ready(n2).message).toMatch(/^Reconciled: .*vgextend vg1 \/dev\/vdc.*fake failure/);
  expect(ready(await getNode("n1"))).toMatchObject({ status: "True", observedGeneration: 2 });
  expect(counts(failing)).toEqual([
    2,
    1,
    n2.status.state === "Degraded" ? 1 : 0,
    n2.status.state === "Failed" ? 1 : 0,
  ]);
  expect(ready(failing)).toMatchObject({
    reason: "LVMNodesNotReady",
    observedGeneration: patched.metadata.generation,
  });
  expect(ready(failing).message).toMatch(/^LVMNodesReady: 1 of 2 LVMNodes are Ready; not yet: n2 \(/);

  // lvm works again: the retry applies, everything is Ready again.
  c.agents.agents.get("n2")!.fake.failOn = undefined;
  const recovered = await eventually(
    "the set Ready again",
    async () => {
      const s = await getSet();
      return ready(s)?.status === "True" && s.status.readyNodes === 2 ? s : undefined;
    },
    60_000,
    100,
  );
  expect(counts(recovered)).toEqual([2, 2, 0, 0]);
  expect(ready(await getNode("n2"))).toMatchObject({ status: "True", observedGeneration: 2 });
  expect(Date.parse(ready(recovered).lastTransitionTime)).toBeGreaterThanOrEqual(
    Date.parse(ready(failing).lastTransitionTime),
  );
});
