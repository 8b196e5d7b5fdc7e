/**
 * Kubeconfigs as users have them: a user that is an `exec` credential plugin (as the usual EKS,
 * GKE and AKS kubeconfigs are), against a real kube-apiserver with static tokens, for the
 * operator process (`--kubeconfig`) and the provider's cluster mode (the `cluster.kubeconfig`
 * input). The plugin is a small node script that prints an ExecCredential holding a token the
 * apiserver accepts, and counts its runs.
 *
 *   npx jest test/kube/exec-plugin --selectProjects integration
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { findClusterAgents } from "../../provider/runtime/v1/cluster-agents";
import { httpTransport } from "../../src/kube/http";
import { startOperator, type RunningOperator } from "../../src/operator/main";
import { ControlPlane, startControlPlane } from "../env/cluster";
import {
  AGENT_NAMESPACE,
  eventually,
  lvmNodes,
  must,
  nodeSet,
  prepareCluster,
  setsPath,
} from "../operator/env";

jest.setTimeout(90_000);

let cp: ControlPlane;
let dir: string;
const NS = "exec-plugin";

beforeAll(async () => {
  cp = await startControlPlane();
  await prepareCluster(cp);
  await must(cp, "POST", "/api/v1/namespaces", { metadata: { name: NS } });
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "exec-plugin-"));
  fs.writeFileSync(
    path.join(dir, "plugin.js"),
    `const fs = require("fs");
const info = JSON.parse(process.env.KUBERNETES_EXEC_INFO);
fs.appendFileSync(process.env.RUNS_FILE, "x");
process.stdout.write(JSON.stringify({
  apiVersion: info.apiVersion,
  kind: "ExecCredential",
  status: { token: process.env.PLUGIN_TOKEN, expirationTimestamp: new Date(Date.now() + 3600e3).toISOString() },
}));`,
  );
});

afterAll(async () => {
  await cp?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

/** A kubeconfig whose only user is the exec plugin, printing `token`; returns its path and text. */
function execKubeconfig(name: string, token: string): { file: string; text: string; runs: () => number } {
  const runsFile = path.join(dir, `${name}.runs`);
  fs.writeFileSync(runsFile, "");
  const text = `apiVersion: v1
kind: Config
current-context: test
contexts: [{name: test, context: {cluster: test, user: plugin}}]
clusters:
- name: test
  cluster: {server: "${cp.url}", certificate-authority-data: ${Buffer.from(cp.caPem).toString("base64")}}
users:
- name: plugin
  user:
    exec:
      apiVersion: client.authentication.k8s.io/v1
      command: ${process.execPath}
      args: [${path.join(dir, "plugin.js")}]
      env: [{name: PLUGIN_TOKEN, value: "${token}"}, {name: RUNS_FILE, value: "${runsFile}"}]
      interactiveMode: Never
`;
  const file = path.join(dir, `${name}.kubeconfig`);
  fs.writeFileSync(file, text, { mode: 0o600 });
  return { file, text, runs: () => fs.readFileSync(runsFile, "utf8").length };
}

describe("the operator with --kubeconfig whose user is an exec plugin", () => {
  let running: RunningOperator | undefined;
  afterAll(async () => running?.stop());

  test("lists, watches and creates as the plugin's identity; the plugin runs once for its credential's hour", async () => {
    const kubeconfig = execKubeconfig("operator", cp.tokens.operator);
    const agentToken = path.join(dir, "agent-token");
    fs.writeFileSync(agentToken, "unused");
    running = await startOperator({
      argv: ["--kubeconfig", kubeconfig.file, "--listen", "127.0.0.1:0", "--agent-token-file", agentToken],
      env: {},
      log: () => undefined,
    });
    await eventually("the operator is ready (caches synced)", async () => {
      const r = await fetch(`${running!.url}/readyz`);
      return r.status === 200;
    });
    await must(cp, "POST", "/api/v1/nodes", { metadata: { name: "exec-n1", labels: { role: "exec" } } });
    await must(cp, "POST", setsPath(NS), nodeSet(NS, "exec-set", ["exec"]));
    await eventually("the LVMNode the operator creates", async () => (await lvmNodes(cp, NS)).has("exec-n1"));
    expect(kubeconfig.runs()).toBe(1);
  });
});

describe("the provider's cluster mode with a kubeconfig whose user is an exec plugin", () => {
  test("finds the nodes and their agent pods as the plugin's identity", async () => {
    await must(cp, "POST", "/api/v1/nodes", {
      metadata: { name: "exec-n2", labels: { role: "cluster-mode" } },
    });
    const kubeconfig = execKubeconfig("provider", cp.tokens.admin);
    const located = await findClusterAgents(httpTransport, AGENT_NAMESPACE, {
      kubeconfig: kubeconfig.text,
      serviceAccount: "lvm-provisioner",
      nodeSelector: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: "role", operator: "In", values: ["cluster-mode"] }] },
        ],
      },
    });
    expect(located.endpoints).toEqual([]);
    expect(located.missing).toEqual([{ node: "exec-n2", message: expect.stringContaining("exec-n2") }]);
    expect(kubeconfig.runs()).toBe(1);
  });

  test("a token the API server refuses: the call and HTTP 401 are named", async () => {
    const kubeconfig = execKubeconfig("refused", "not-a-token-the-apiserver-knows");
    await expect(
      findClusterAgents(httpTransport, AGENT_NAMESPACE, { kubeconfig: kubeconfig.text, serviceAccount: "x" }),
    ).rejects.toThrow(/^cannot list the nodes: GET \/api\/v1\/nodes: HTTP 401: /);
    expect(kubeconfig.runs()).toBe(1);
  });
});
