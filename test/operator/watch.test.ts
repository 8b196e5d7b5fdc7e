/**
 * The operator's watches against a real kube-apiserver behind a proxy the test cuts: they resume
 * after the connection drops, and list again after a 410 Gone. The API server runs without a watch
 * cache and compacts etcd every second, so a watch resumed from a version a few seconds old really
 * gets "410 Expired" from etcd's compaction, not from a stand-in.
 *
 *   npx jest test/operator/watch --selectProjects integration
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ControlPlane, repoRoot, startControlPlane } from "../env/cluster";
import {
  eventually,
  lvmNodes,
  must,
  nodeSet,
  prepareCluster,
  setsPath,
  sleep,
  startTestOperator,
  type TestOperator,
} from "./env";
import { startProxy, type CuttableProxy } from "./proxy";

jest.setTimeout(60_000);

let cp: ControlPlane;
let proxy: CuttableProxy;
let op: TestOperator;
const NS = "storage";

beforeAll(async () => {
  cp = await startControlPlane({ apiserverFlags: ["--watch-cache=false", "--etcd-compaction-interval=1s"] });
  await prepareCluster(cp);
  await must(cp, "POST", "/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: NS },
  });
  await cp.createNode("w1", { role: "storage" });
  await cp.createNode("w2", { role: "compute" });
  proxy = await startProxy(Number(new URL(cp.url).port));
  op = startTestOperator(cp, `https://127.0.0.1:${proxy.port}`);
  await eventually("caches synced", async () => op.operator.ready);
  await must(cp, "POST", setsPath(NS), nodeSet(NS, "fast", ["storage"]));
  await eventually("LVMNode w1", async () => (await lvmNodes(cp, NS)).has("w1"));
}, 120_000);

afterAll(async () => {
  await op?.stop();
  await proxy?.close();
  await cp?.stop();
});

/** Watch restarts for `reason`, from the metric: while the API server is unreachable they are not logged one by one. */
const restarts = async (reason: string) =>
  (await op.metrics.watchRestarts.get()).values
    .filter((v) => v.labels.reason === reason)
    .reduce((n, v) => n + v.value, 0);
const relabel = (node: string, role: string) =>
  must(cp, "PATCH", `/api/v1/nodes/${node}`, { metadata: { labels: { role } } });

test("the watches resume after the API server's connections are reset", async () => {
  const before = (await restarts("error")) + (await restarts("closed"));
  proxy.cut();
  await eventually(
    "watches noticed",
    async () => (await restarts("error")) + (await restarts("closed")) >= before + 3,
  );
  await relabel("w2", "storage");
  await eventually("LVMNode w2 after the reconnect", async () => (await lvmNodes(cp, NS)).has("w2"));
});

test("a watch resumed from a compacted version gets 410 Gone, lists again, and misses nothing", async () => {
  proxy.cut(true); // down: the operator keeps retrying with backoff
  await sleep(300);
  await relabel("w1", "compute"); // happens while the operator is blind
  await sleep(3500); // etcd compacts past the versions the operator last saw
  const expiredBefore = await restarts("expired");
  proxy.up();
  await eventually("410 Expired seen", async () => (await restarts("expired")) > expiredBefore);
  await eventually("LVMNode w1 deleted after the re-list", async () => !(await lvmNodes(cp, NS)).has("w1"));
  const log = op.logs.find((l) => l.msg === "watch restarted" && l.reason === "expired");
  expect(String(log?.error)).toMatch(/HTTP 410 Expired|too old/);
});

test("`pulumi-lvm operator`: ready after sync, metrics, exit 0 on SIGTERM", async () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "operator-cli-"));
  fs.writeFileSync(path.join(dir, "token"), cp.tokens.operator);
  fs.writeFileSync(path.join(dir, "ca.crt"), cp.caPem);
  const tsx = path.join(repoRoot, "node_modules", ".bin", "tsx");
  const child = spawn(
    tsx,
    [
      path.join(repoRoot, "src", "cli", "main.ts"),
      "operator",
      "--server",
      cp.url,
      "--listen",
      "127.0.0.1:0",
      "--namespace",
      "cli",
      // The test identity's static token is no service-account JWT: name the account agent tokens are requested for.
      "--service-account",
      cp.identities.operator.username.split(":").slice(2).join("/"),
    ],
    {
      env: {
        ...process.env,
        PULUMI_LVM_OPERATOR_TOKEN_FILE: path.join(dir, "token"),
        PULUMI_LVM_OPERATOR_CA_FILE: path.join(dir, "ca.crt"),
      },
    },
  );
  let stderr = "";
  child.stderr.on("data", (c: Buffer) => (stderr += c.toString()));
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  try {
    const url = await eventually(
      "listening",
      async () => /"msg":"listening","url":"([^"]+)"/.exec(stderr)?.[1],
      20_000,
    );
    expect((await fetch(`${url}/healthz`)).status).toBe(200);
    await eventually("ready", async () => (await fetch(`${url}/readyz`)).status === 200);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    expect(metrics).toContain("pulumi_lvm_operator_queue_depth 0");
    expect(metrics).toMatch(
      /pulumi_lvm_operator_api_requests_total\{verb="LIST",resource="nodes",code="200"\} 1/,
    );
    expect(metrics).toContain("# TYPE pulumi_lvm_operator_reconcile_duration_seconds histogram");
    expect(metrics).toMatch(/^process_resident_memory_bytes \d+/m); // prom-client's process metrics
    const t0 = Date.now();
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
    console.log(`operator process stopped ${Date.now() - t0} ms after SIGTERM`);
    expect(stderr).toContain('"msg":"stopped"');
  } finally {
    child.kill("SIGKILL");
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
