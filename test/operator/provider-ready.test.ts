/**
 * ProviderReady (issue 17) against the real kube-apiserver, the subcommand with --provider-ready:
 * the set's condition follows TopoLVM's CSIDriver and the CSINodes of its selected nodes (what the
 * kubelet writes when TopoLVM's node plugin registers; created here by hand, no kubelet).
 *
 *   npx jest test/operator/provider-ready --runInBand
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startOperator, type RunningOperator } from "../../src/operator/main";
import { ControlPlane, Json, startControlPlane } from "../env/cluster";
import { eventually, must, nodeSet, prepareCluster, setsPath } from "./env";

jest.setTimeout(60_000);

let cp: ControlPlane;
let op: RunningOperator;
let dir: string;
const NS = "storage";

beforeAll(async () => {
  cp = await startControlPlane();
  await prepareCluster(cp);
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  await cp.createNode("n1", { role: "storage" });
  await cp.createNode("n2", { role: "storage" });
  await cp.createNode("n3", { role: "compute" });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-provider-"));
  fs.writeFileSync(path.join(dir, "token"), cp.tokens.operator);
  fs.writeFileSync(path.join(dir, "ca.pem"), cp.caPem);
  op = await startOperator({
    argv: [
      ...["--server", cp.url, "--token-file", path.join(dir, "token"), "--ca-file", path.join(dir, "ca.pem")],
      ...["--listen", "127.0.0.1:0", "--agent-token-file", path.join(dir, "token"), "--resync", "1s"],
      "--provider-ready",
    ],
    env: {},
    log: () => undefined,
  });
  await eventually("the operator is ready", async () => (await fetch(`${op.url}/readyz`)).status === 200);
}, 120_000);

afterAll(async () => {
  await op?.stop();
  await cp?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const providerReady = async (): Promise<Json> => {
  const set = await must(cp, "GET", setsPath(NS, "fast"));
  return (set.status?.conditions ?? []).find((c: Json) => c.type === "ProviderReady");
};
const csiNode = (name: string, drivers: string[]) => ({
  apiVersion: "storage.k8s.io/v1",
  kind: "CSINode",
  metadata: { name },
  spec: { drivers: drivers.map((d) => ({ name: d, nodeID: name })) },
});

test("ProviderReady follows TopoLVM's CSIDriver and each selected node's CSINode", async () => {
  await must(cp, "POST", setsPath(NS), nodeSet(NS, "fast", ["storage"]));
  const missing = await eventually("CSIDriverMissing", async () => {
    const c = await providerReady();
    return c?.reason === "CSIDriverMissing" ? c : undefined;
  });
  expect(missing).toMatchObject({
    status: "False",
    message: "CSIDriver topolvm.io does not exist: TopoLVM is not installed",
    observedGeneration: 1,
  });

  await must(cp, "POST", "/apis/storage.k8s.io/v1/csidrivers", {
    metadata: { name: "topolvm.io" },
    spec: { attachRequired: false },
  });
  await must(cp, "POST", "/apis/storage.k8s.io/v1/csinodes", csiNode("n1", ["topolvm.io"]));
  // n3 is not selected: its CSINode does not matter; n2's lists another driver only.
  await must(cp, "POST", "/apis/storage.k8s.io/v1/csinodes", csiNode("n2", ["other.example.com"]));
  const one = await eventually("only n2 missing", async () => {
    const c = await providerReady();
    return c?.reason === "NodePluginNotRegistered" ? c : undefined;
  });
  expect(one).toMatchObject({
    status: "False",
    message:
      "TopoLVM's node plugin is not registered on 1 of 2 selected node(s): n2 (their CSINode does not list topolvm.io)",
  });

  await must(cp, "PATCH", "/apis/storage.k8s.io/v1/csinodes/n2", {
    spec: {
      drivers: [
        { name: "other.example.com", nodeID: "n2" },
        { name: "topolvm.io", nodeID: "n2" },
      ],
    },
  });
  const ready = await eventually("ProviderReady True", async () => {
    const c = await providerReady();
    return c?.status === "True" ? c : undefined;
  });
  expect(ready).toMatchObject({
    reason: "ProviderReady",
    message: "CSIDriver topolvm.io exists and is registered on all 2 selected node(s)",
  });
});
