/**
 * An LvmSystem and a NodeSet in cluster mode from Python, through pulumi-lvm's component provider,
 * with the real engine: the CLI and its Node.js and Python hosts (test/pulumi/install.sh), the real
 * Kubernetes provider plugin (pulumi-resource-kubernetes 4.32.0) against a real kube-apiserver
 * (test/env), TopoLVM's chart 17.1.0 from the verified snapshot on disk, the package as `npm pack`
 * publishes it, and the Python program test/pulumi/python-program-system on the SDK `pulumi package
 * add` generates. Everything is checked with the test's own API reads and `vgs`.
 *
 * There is no kubelet: no pod ever runs. The Python program therefore passes a TEST-ONLY
 * `transforms` option to the LvmSystem (skip_await_without_kubelet, the Python twin of
 * kubernetes-program's transformation), which the engine runs on every child the component provider
 * registers; the test sees its mark (`pulumi.com/skipAwait`) on the objects. For cluster mode the
 * test plays the kubelet as test/provider/cluster-mode.test.ts does: a Node object, the agent pod
 * made from the DaemonSet the Python program applied (`spec.nodeName` set, status Running and Ready
 * at a TEST-NET-2 pod IP), and the API server's egress selector mapping that IP to a real agent on
 * loop devices (test/provider/pod-network.ts). The engine commands run without blocking this
 * process's event loop: the pod network lives in it.
 *
 * Missing binaries, the plugin, the wheels or a stale dist/ fail the run; nothing skips.
 * See docs/languages.md.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import {
  commandLog,
  isWrite,
  membersOf,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  type AgentProcess,
} from "../agent/harness";
import { startControlPlane, type ControlPlane, type Json } from "../env/cluster";
import { reportPodStatus } from "../env/kubelet-stand-in";
import { PodNetwork } from "../provider/pod-network";
import {
  pulumiBinDir,
  PulumiWorkspace,
  requirePulumiBinaries,
  type RunResult,
  type StateResource,
} from "./cli";
import { kubernetesObjects, missingObjects, objectGetter, type DeclaredObject } from "./apiserver-objects";
import { requireCommandPlugin } from "./command-plugin";
import {
  createVirtualenv,
  installPackedPackage,
  offlinePip,
  pythonWheelsDir,
  requireFreshBuild,
} from "./component-package";
import { requireKubernetesPlugin } from "./kubernetes-plugin";
import { leftAfterDestroy, RETAINED_CRDS, topolvmChart } from "./topolvm-chart";
import { Timings } from "../timings";

jest.setTimeout(1_800_000);

const REPO = path.resolve(__dirname, "..", "..");
const PROGRAM = path.join(__dirname, "python-program-system");
const NAMESPACE = "lvm-system";
const NODE = "py-node";
/** The agent pod's IP (TEST-NET-2: the API server accepts it, the pod network maps it, nothing dials it). */
const POD_IP = "198.51.100.20";
/** The agent container's port in the DaemonSet's pod template (LvmSystem's default agentPort). */
const POD_PORT = 8080;
const IMAGE = "pulumi-lvm:py-e2e";
const VG = `pcl-${randomBytes(3).toString("hex")}`;
const SYSTEM_TYPE = "pulumi-lvm:index:LvmSystem";
const NODE_SET_TYPE = "pulumi-lvm:index:NodeSet";
const DISKS_TYPE = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";
/** Where the backing files of our loop devices go (volume groups pcl-*). */
const ROOT = "/var/tmp/pulumi-python-tests";
/** Under load (2 cores shared) a chart render plus ~40 objects takes minutes. */
const LONG = { timeoutMs: 900_000 };

let scratch: Scratch | undefined;
let network: PodNetwork | undefined;
let agent: AgentProcess | undefined;
let cp: ControlPlane | undefined;
let ws: PulumiWorkspace | undefined;
let devices: string[];
/** The Kubernetes objects the LvmSystem's `up` created, from the state. */
let declared: DeclaredObject[] = [];
const timings = new Timings();
const timed = <T>(name: string, f: () => T): T => timings.timed(name, f);

/** `pulumi <args>`, without blocking the event loop (the pod network answers the API server here); throws unless it exits 0. */
async function pulumi(args: readonly string[], opts: { input?: string } = {}): Promise<RunResult> {
  const r = await ws!.runAsync(args, { ...LONG, ...opts });
  if (r.code !== 0)
    throw new Error(`pulumi ${args.join(" ")} exited ${r.code}:\n${r.stdout}\n--- stderr ---\n${r.stderr}`);
  return r;
}

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field
async function must(method: string, urlPath: string, body?: unknown): Promise<any> {
  const r = await cp!.request(method, urlPath, body);
  if (r.status >= 300) throw new Error(`${method} ${urlPath}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

const get = objectGetter(() => cp!);

const resources = async (): Promise<StateResource[]> =>
  (JSON.parse((await pulumi(["stack", "export"])).stdout) as { deployment: { resources?: StateResource[] } })
    .deployment.resources ?? [];
const output = async (name: string): Promise<unknown> =>
  JSON.parse((await pulumi(["stack", "output", name, "--json"])).stdout);
const writesSince = (n: number) => commandLog(scratch!.path("commands.jsonl")).slice(n).filter(isWrite);
const logLength = () => commandLog(scratch!.path("commands.jsonl")).length;
const agentPodName = (daemonSet: string) => `${daemonSet}-${NODE}`;

beforeAll(async () => {
  requirePulumiBinaries();
  requireHostTier();
  requireFreshBuild(REPO);
  const plugins = [requireKubernetesPlugin(), requireCommandPlugin()];
  const wheels = pythonWheelsDir(pulumiBinDir());
  scratch = new Scratch("python-cluster", ROOT);
  devices = [scratch.loop(), scratch.loop(), scratch.loop()];
  execFileSync("mkfs.ext4", ["-q", "-F", devices[2]!], { stdio: "ignore" });

  network = await PodNetwork.start(scratch.dir);
  // Privileged pod templates (the agent, lvmd, topolvm-node) are refused without it, as in a real
  // cluster; the garbage collector and namespace controller finish destroy's deletions.
  cp = await startControlPlane({
    controllerManager: true,
    namespace: NAMESPACE,
    apiserverFlags: [`--egress-selector-config-file=${network.configFile}`, "--allow-privileged=true"],
  });
  // The node the Python program's node selector picks; and the agent's identity may review tokens
  // and access (system:auth-delegator), as LvmSystem's binding lets the agents' service account.
  await cp.createNode(NODE, { "pulumi-lvm.test/storage": "true" });
  await must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    metadata: { name: "py-agent-auth-delegator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "User", name: cp.identities.agent.username }],
  });
  agent = await startAgent({
    node: NODE,
    devices,
    ...scratch.agentFiles(),
    auth: { kubeconfig: cp.kubeconfigFor("agent") },
    extraArgs: ["--namespace", NAMESPACE],
  });
  network.route(POD_IP, POD_PORT, Number(new URL(agent.url).port));

  ws = new PulumiWorkspace("pysys", randomBytes(12).toString("hex"), {
    root: ROOT,
    projectFile: path.join(PROGRAM, "Pulumi.yaml"),
    copyProgram: true,
    plugins,
    env: offlinePip(wheels),
  });
  await timed("npm pack + install into node_modules", async () => installPackedPackage(REPO, ws!.project));
  await timed("virtualenv (pulumi from wheels)", async () => createVirtualenv(ws!.project, wheels));
  await pulumi(["login", `file://${ws.backend}`]);
  await pulumi(["stack", "init", ws.stack, "--secrets-provider", "passphrase"]);
  // The chart inside the program's directory, named by a relative path: relative to the program's
  // directory, as the arg's docs say, though the component runs in the provider's process.
  const chart = topolvmChart(path.join(ws.project, "charts"));
  await pulumi(["config", "set", "topolvmChartPath", path.relative(ws.project, chart)]);
  await pulumi(["config", "set", "agentImage", IMAGE]);
  await pulumi(["config", "set", "volumeGroup", VG]);
  for (const [i, dev] of devices.entries()) await pulumi(["config", "set", "--path", `devices[${i}]`, dev]);
  // From stdin: the admin's bearer token is on no command line.
  await pulumi(["config", "set", "--secret", "kubernetes:kubeconfig"], {
    input: fs.readFileSync(cp.kubeconfigPath, "utf8"),
  });
  // Installs the package's dependencies in its directory, then generates and installs the SDK
  // (component-provider.test.ts checks both; here they are the way in).
  await timed("package add (Python SDK)", () => pulumi(["package", "add", "./node_modules/pulumi-lvm"]));
}, 1_800_000);

afterAll(async () => {
  await agent?.stop();
  await cp?.stop();
  await network?.close();
  scratch?.cleanup();
  ws?.cleanup();
  console.log(timings.table("LvmSystem and cluster-mode NodeSet from Python, seconds"));
});

describe("an LvmSystem from Python, applied with the real Kubernetes provider", () => {
  it("up creates every object the component declares; the test reads each back from the apiserver", async () => {
    const r = await timed("up (Python, LvmSystem)", () => pulumi(["up", "--yes"]));
    expect(r.output).toMatch(/\d+ created/);
    const state = await resources();
    const system = state.find((s) => s.type === SYSTEM_TYPE);
    expect(system).toBeDefined();
    declared = kubernetesObjects(state);
    // The component provider registered them under the LvmSystem (the chart's under its Chart).
    for (const s of state.filter((x) => x.type.startsWith("kubernetes:") && x.id))
      expect(s.urn).toContain(`${SYSTEM_TYPE}$`);
    expect(declared.length).toBeGreaterThan(30);
    expect(await missingObjects(declared, get)).toEqual([]);
  });

  it("the namespace, the Established CRDs, the agent DaemonSet and the operator carry our image and args", async () => {
    expect(await output("namespace")).toBe(NAMESPACE);
    const ns = await get("v1", "Namespace", NAMESPACE);
    expect(ns.metadata.labels).toMatchObject({ "pod-security.kubernetes.io/enforce": "privileged" });
    for (const crd of RETAINED_CRDS) {
      const got = await get("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd);
      expect(got.status.conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: "Established", status: "True" })]),
      );
    }
    const ds = await get("apps/v1", "DaemonSet", (await output("agentDaemonSet")) as string, NAMESPACE);
    const [container] = ds.spec.template.spec.containers;
    expect(container).toMatchObject({
      image: IMAGE,
      imagePullPolicy: "Never",
      command: ["pulumi-lvm", "agent"],
    });
    // LvmSystem's flags, agentPlainHttp's, then the Python program's agentArgs, last.
    expect(container.args).toEqual(expect.arrayContaining(["--allow-plain-http", "--namespace", NAMESPACE]));
    expect(container.args.slice(-2)).toEqual(["--command-timeout", "5m"]);
    expect(ds.spec.template.spec.hostPID).toBe(true);
    // The Python transform reached the component provider's child (the test-only mark).
    expect(ds.metadata.annotations).toMatchObject({ "pulumi.com/skipAwait": "true" });
    const operator = await get(
      "apps/v1",
      "Deployment",
      (await output("operatorDeployment")) as string,
      NAMESPACE,
    );
    expect(operator.spec.template.spec.containers[0]).toMatchObject({
      image: IMAGE,
      command: ["pulumi-lvm", "operator"],
    });
    expect(operator.metadata.annotations).toMatchObject({ "pulumi.com/skipAwait": "true" });
    const webhooks = declared.filter((o) => o.kind === "ValidatingWebhookConfiguration");
    expect(webhooks.length).toBeGreaterThan(0);
    for (const w of webhooks) {
      const got = await get("admissionregistration.k8s.io/v1", w.kind, w.name);
      for (const hook of got.webhooks) expect(hook.failurePolicy).toBe("Ignore"); // the transform, again
    }
  });

  it("TopoLVM from the chart on disk: its CSIDriver, controller, node plugin and one lvmd for node set e2e", async () => {
    expect(await get("storage.k8s.io/v1", "CSIDriver", "topolvm.io")).toBeDefined();
    const names = (kind: string) => declared.filter((o) => o.kind === kind).map((o) => o.name);
    expect(names("Deployment")).toEqual(expect.arrayContaining(["topolvm-controller"]));
    expect(names("DaemonSet")).toEqual(expect.arrayContaining(["topolvm-node"]));
    const lvmd = names("DaemonSet").filter((n) => /lvmd/.test(n));
    expect(lvmd).toHaveLength(1);
    const got = await get("apps/v1", "DaemonSet", lvmd[0]!, NAMESPACE);
    // Only on the node set's nodes: the Python program's nodeSelector, carried to the chart.
    expect(JSON.stringify(got.spec.template.spec.affinity)).toContain("pulumi-lvm.test/storage");
  });
});

describe("a NodeSet in cluster mode from Python, through the API server to the node's agent", () => {
  let podName: string;
  beforeAll(async () => {
    // The kubelet's part: the agent pod the DaemonSet (as the Python program applied it) runs on the
    // node, Running and Ready at the pod IP the pod network maps to the real agent.
    const daemonSet = (await output("agentDaemonSet")) as string;
    const ds = await get("apps/v1", "DaemonSet", daemonSet, NAMESPACE);
    podName = agentPodName(daemonSet);
    await must("POST", `/api/v1/namespaces/${NAMESPACE}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: podName, labels: ds.spec.template.metadata.labels },
      spec: { ...ds.spec.template.spec, nodeName: NODE },
    });
    await reportPodStatus(cp!, { namespace: NAMESPACE, name: podName, ip: POD_IP, ready: true });
    await pulumi(["config", "set", "clusterNodeSet", "true"]);
  });

  it("preview shows the node's plan, reached through the API server as the provisioner; nothing is written", async () => {
    const before = { log: logLength(), calls: agent!.logs.length };
    const { output: text } = await timed("preview --diff (Python, cluster-mode NodeSet)", () =>
      pulumi(["preview", "--diff"]),
    );
    expect(text).toContain(`+ ${DISKS_TYPE}: (create)`);
    expect(text).toContain(`${NODE}: {`);
    expect(text).toContain(`${devices[0]} → ${VG} (new volume group)`);
    expect(text).toContain(`${devices[1]} → ${VG} (new volume group)`);
    expect(text).toMatch(new RegExp(`${devices[2]}: .*ext4`));
    // The agent authenticated the LvmSystem's provisioner (its token requested through the API server).
    const callers = agent!.logs
      .slice(before.calls)
      .filter((e) => e.msg === "request" && String(e.path).startsWith("/v1/"))
      .map((e) => e.user);
    expect(callers.length).toBeGreaterThan(0);
    expect(new Set(callers)).toEqual(
      new Set([`system:serviceaccount:${NAMESPACE}:${await output("provisioner")}`]),
    );
    expect(network!.connects).toContain(`${POD_IP}:${POD_PORT}`);
    expect(writesSince(before.log)).toEqual([]);
    expect(vgs(devices)).toEqual([]);
    expect(await get("lvm.topolvm.io/v2alpha1", "LVMNodeSet", "e2e", NAMESPACE)).toBeUndefined();
  });

  it("up builds the volume group through the agent and creates the LVMNodeSet; no kubeconfig in plain text", async () => {
    await timed("up (Python, cluster-mode NodeSet)", () => pulumi(["up", "--yes"]));
    expect(vgs(devices)).toEqual([
      expect.objectContaining({ vg_name: VG, pv_count: "2", vg_tags: "pulumi-lvm" }),
    ]);
    expect(membersOf(devices, VG)).toEqual([devices[0], devices[1]].sort());
    const state = await resources();
    const disks = state.find((r) => r.type === DISKS_TYPE);
    expect(disks?.urn).toContain(`${NODE_SET_TYPE}$${DISKS_TYPE}::e2e-disks`);
    expect((disks!.outputs!.nodes as Record<string, { stepsDone: number }>)[NODE]).toMatchObject({
      stepsDone: 6,
    });
    // Cluster mode keeps no agent token; the kubeconfig (the admin's token) only as a secret.
    expect((disks!.inputs as Json).agents).toBeUndefined();
    const exported = (await pulumi(["stack", "export"])).stdout;
    expect(exported).not.toContain(cp!.tokens.admin);
    const nodeSet = await get("lvm.topolvm.io/v2alpha1", "LVMNodeSet", "e2e", NAMESPACE);
    expect(nodeSet?.spec?.template?.volumeGroups?.map((v: Json) => v.name)).toEqual([VG]);
    const classes = (await output("storageClasses")) as Record<string, string>;
    expect(await get("storage.k8s.io/v1", "StorageClass", classes[`${VG}-thick`]!)).toMatchObject({
      provisioner: "topolvm.io",
      parameters: { "topolvm.io/device-class": `${VG}-thick` },
    });
  });

  it("destroy removes every object but the retained CRDs; deletionPolicy Retain leaves the volume group", async () => {
    const before = { log: logLength(), vgs: vgs(devices) };
    // The kubelet's part again: a pod bound to a node is gone only once its kubelet confirms it.
    await must("DELETE", `/api/v1/namespaces/${NAMESPACE}/pods/${podName}?gracePeriodSeconds=0`);
    await timed("destroy (Python)", () => pulumi(["destroy", "--yes"]));
    expect(await leftAfterDestroy(declared, get)).toEqual([]);
    expect(await get("v1", "Namespace", NAMESPACE)).toBeUndefined();
    expect(writesSince(before.log)).toEqual([]);
    expect(vgs(devices)).toEqual(before.vgs);
  });
});
