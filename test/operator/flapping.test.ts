/**
 * A node label that flickers (issue 12, item 7), against a real kube-apiserver: a node that leaves
 * the selector for a moment keeps its LVMNode (the deselection grace period), so no create/delete
 * churn and no teardown with deletionPolicy Delete; the set's status is written at most every 2 s.
 *
 *   npx jest test/operator/flapping --selectProjects integration
 */
import { ControlPlane, startControlPlane } from "../env/cluster";
import {
  eventually,
  lvmNodes,
  must,
  nodeSet,
  prepareCluster,
  settled,
  setsPath,
  sleep,
  startTestOperator,
  type TestOperator,
} from "./env";

jest.setTimeout(120_000);

const NS = "storage";
const NODES = Array.from({ length: 20 }, (_, i) => `f${String(i).padStart(2, "0")}`);
const GRACE_MS = 8000;

let cp: ControlPlane;
let op: TestOperator;

beforeAll(async () => {
  cp = await startControlPlane();
  await prepareCluster(cp);
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  for (const n of NODES) await cp.createNode(n, { role: "storage" });
  op = startTestOperator(cp, cp.url, { deselectionGraceMs: GRACE_MS });
  await eventually("caches synced", async () => op.operator.ready);
}, 120_000);

afterAll(async () => {
  await op?.stop();
  await cp?.stop();
});

const relabel = (node: string, role: string) =>
  must(cp, "PATCH", `/api/v1/nodes/${node}`, { metadata: { labels: { role } } });

test("60 label flips in 6 s on one of 20 nodes: no LVMNode created or deleted, few status writes", async () => {
  await must(cp, "POST", setsPath(NS), nodeSet(NS, "flap", ["storage"]));
  await eventually("20 LVMNodes", async () => (await lvmNodes(cp, NS)).size === NODES.length);
  await settled(op, 1000);
  const uid = (await lvmNodes(cp, NS)).get("f07")!.metadata.uid;
  const from = op.requests.length;
  for (let i = 0; i < 60; i++) {
    await relabel("f07", i % 2 === 0 ? "other" : "storage");
    await sleep(100);
  }
  await settled(op, 2500);
  const since = op.requests.slice(from);
  const count = (verb: string, resource: string) =>
    since.filter((r) => r.verb === verb && r.resource === resource).length;
  console.log(
    `60 flips: ${count("CREATE", "lvmnodes")} creates, ${count("DELETE", "lvmnodes")} deletes, ${count("PATCH", "lvmnodesets")} set status patches`,
  );
  expect(count("CREATE", "lvmnodes")).toBe(0);
  expect(count("DELETE", "lvmnodes")).toBe(0);
  expect(count("PATCH", "lvmnodesets")).toBeLessThanOrEqual(6);
  expect((await lvmNodes(cp, NS)).get("f07")!.metadata.uid).toBe(uid);
});

test("a node that stays out of the selector loses its LVMNode once the grace period is over", async () => {
  const t0 = Date.now();
  await relabel("f03", "other");
  await sleep(GRACE_MS / 2);
  expect((await lvmNodes(cp, NS)).has("f03")).toBe(true);
  await eventually("f03's LVMNode deleted", async () => !(await lvmNodes(cp, NS)).has("f03"), GRACE_MS * 3);
  const waited = Date.now() - t0;
  console.log(`deselected -> LVMNode deleted after ${waited} ms (grace ${GRACE_MS} ms)`);
  expect(waited).toBeGreaterThanOrEqual(GRACE_MS);
  expect(op.logs).toContainEqual(
    expect.objectContaining({
      msg: "node deselected; its LVMNode is kept for the grace period",
      node: "f03",
    }),
  );
});
