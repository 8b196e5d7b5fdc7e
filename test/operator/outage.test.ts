/**
 * The operator through an API server outage of 30 s (issue 12, "Also"): a real kube-apiserver
 * behind a proxy that refuses every connection for the outage (as a stopped API server does), 20
 * Nodes whose agents are stand-ins (HTTP listeners in this process, named so: their answers do not
 * matter here), a 5 s resync, the operator's own backoff (not the tests' quick one). It counts what the operator sends to the API server and what it logs
 * during the outage: it must back off, and log once per change of state, not once per failure.
 *
 *   npx jest test/operator/outage --selectProjects integration
 */
import { ControlPlane, startControlPlane } from "../env/cluster";
import { standInAgents, type StandInAgents } from "../support/agent/stand-in-agents";
import { createAgentServiceAccount, registerAgentNodes } from "./agent-pods";
import {
  eventually,
  must,
  nodeSet,
  plainHttpAgents,
  prepareCluster,
  setsPath,
  sleep,
  startTestOperator,
  type TestOperator,
} from "./env";
import { startProxy, type CuttableProxy } from "./proxy";

jest.setTimeout(240_000);

const NS = "storage";
const NODES = Array.from({ length: 20 }, (_, i) => `o${String(i).padStart(2, "0")}`);
const OUTAGE_MS = 30_000;

let cp: ControlPlane;
let proxy: CuttableProxy;
let op: TestOperator;
let agents: StandInAgents;

beforeAll(async () => {
  cp = await startControlPlane();
  await prepareCluster(cp);
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  await createAgentServiceAccount(cp);
  agents = await standInAgents(NODES);
  await registerAgentNodes(cp, NODES, {
    portOf: (node) => agents.ports.get(node)!,
    labelsOf: () => ({ role: "storage" }),
    image: "stand-in",
  });
  proxy = await startProxy(Number(new URL(cp.url).port));
  op = startTestOperator(cp, `https://127.0.0.1:${proxy.port}`, {
    agents: plainHttpAgents(async () => "stand-in"),
    resyncMs: 5000,
    defaultBackoff: true,
  });
  await eventually("caches synced", async () => op.operator.ready);
  await must(cp, "POST", setsPath(NS), nodeSet(NS, "fast", ["storage"]));
  await eventually(
    "the set Ready",
    async () => (await must(cp, "GET", setsPath(NS, "fast"))).status?.state === "Ready",
    60_000,
    200,
  );
}, 240_000);

afterAll(async () => {
  await op?.stop();
  await proxy?.close();
  agents?.close();
  await cp?.stop();
});

test("30 s without the API server: backoff, a log line per change of state, and back in sync after", async () => {
  const fromRequests = op.requests.length;
  const fromLogs = op.logs.length;
  proxy.cut(true);
  await sleep(OUTAGE_MS);
  const requests = op.requests.length - fromRequests;
  const logs = op.logs.slice(fromLogs);
  proxy.up();
  console.log(
    JSON.stringify({
      outageSeconds: OUTAGE_MS / 1000,
      nodes: NODES.length,
      requestsDuringOutage: requests,
      logLinesDuringOutage: logs.length,
      logMessages: [...new Set(logs.map((l) => l.msg))],
    }),
  );
  expect(logs.length).toBeLessThanOrEqual(8);
  expect(requests).toBeLessThanOrEqual(40);
  // Back: a change made now is reconciled (the informers reconnect within their 30 s cap).
  await must(cp, "PATCH", `/api/v1/nodes/${NODES[0]}`, { metadata: { labels: { role: "compute" } } });
  const t0 = Date.now();
  await eventually(
    `LVMNode ${NODES[0]} deleted after the outage`,
    async () =>
      (await cp.request("GET", `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NS}/lvmnodes/${NODES[0]}`))
        .status === 404,
    60_000,
    500,
  ).catch((e: Error) => {
    throw new Error(
      `${e.message}; the operator logged since the outage: ${JSON.stringify(op.logs.slice(fromLogs))}`,
    );
  });
  console.log(`back in sync ${Date.now() - t0} ms after the API server came back`);
  expect(op.logs.slice(fromLogs).some((l) => /reachable again/.test(String(l.msg)))).toBe(true);
});
