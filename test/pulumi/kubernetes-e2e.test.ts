/**
 * `pulumi preview`, `up`, a second `preview` and `destroy` of an LvmSystem (CRDs, RBAC, agent
 * DaemonSet, operator, TopoLVM from its chart on disk) and a NodeSet in cluster mode, with the real
 * engine and the REAL Kubernetes provider (pulumi-resource-kubernetes 4.32.0, built from source by
 * test/pulumi/install-kubernetes.sh) against a real kube-apiserver (test/env). Every outcome is
 * checked with the test's own API reads, never through our code.
 *
 * What this tier cannot show: there is no kubelet, so no pod ever runs. The program therefore
 * carries a TEST-ONLY transformation (skipAwaitWithoutKubelet in kubernetes-program/index.ts) that
 * tells the provider not to wait for workloads to roll out; the objects themselves are created and
 * read back here. Pods Running, lvmd serving and PVCs binding are the cluster tier's journey test.
 *
 * Missing binaries (the CLI, the plugin, the apiserver) are a failure saying how to build them, never a skip.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { startControlPlane, type ControlPlane, type Json } from "../env/cluster";
import { kubernetesObjects, missingObjects, objectGetter } from "./apiserver-objects";
import { PulumiWorkspace, requirePulumiBinaries } from "./cli";
import { kubernetesSdkVersion, requireKubernetesPlugin } from "./kubernetes-plugin";
import { leftAfterDestroy, topolvmChart } from "./topolvm-chart";
import { Timings } from "../timings";

jest.setTimeout(1_800_000);

const PROGRAM = path.join(__dirname, "kubernetes-program");
const NAMESPACE = "lvm-system";
/** The key Pulumi marks a secret with, in the state. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";
/** Under load (2 cores shared) a chart render plus ~40 objects takes minutes. */
const LONG = { timeoutMs: 900_000 };

let cp: ControlPlane | undefined;
let ws: PulumiWorkspace | undefined;
let scratch: string;
let pluginDir: string;
const timings = new Timings();
const timed = <T>(name: string, f: () => T): T => timings.timed(name, f);

beforeAll(async () => {
  requirePulumiBinaries();
  pluginDir = requireKubernetesPlugin();
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-k8s-e2e-"));
  const chart = topolvmChart(path.join(scratch, "chart"));
  // Privileged pod templates (the agent, lvmd, topolvm-node) are refused without it, as in a real cluster's apiserver.
  cp = await startControlPlane({ controllerManager: true, apiserverFlags: ["--allow-privileged=true"] });
  ws = new PulumiWorkspace("k8s", randomBytes(12).toString("hex"), {
    root: scratch,
    programDir: PROGRAM,
    plugins: [pluginDir],
  });
  ws.init();
  // From stdin: the kubeconfig (the admin's bearer token) is on no command line.
  ws.ok(["config", "set", "--secret", "kubeconfig"], { input: fs.readFileSync(cp.kubeconfigPath, "utf8") });
  ws.ok(["config", "set", "topolvmChartPath", chart]);
}, 600_000);

afterAll(async () => {
  await cp?.stop();
  ws?.cleanup();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  console.log(timings.table("kubernetes e2e, seconds"));
});

/* ----------------------------------------------------------------- the test's own reads ---- */

const get = objectGetter(() => cp!);

let declared: ReturnType<typeof kubernetesObjects> = [];

/* ------------------------------------------------------------------------------ tests ---- */

describe("the plugin", () => {
  it("the engine asks for exactly the pinned @pulumi/kubernetes version, and does not download it", () => {
    expect(kubernetesSdkVersion()).toBe("4.32.0");
    expect(path.basename(pluginDir)).toBe("resource-kubernetes-v4.32.0");
    // A workspace whose PULUMI_HOME lacks the plugin: the engine must fail naming kubernetes 4.32.0
    // (automatic plugin acquisition is off in every workspace: nothing is ever downloaded).
    const bare = new PulumiWorkspace("bare", "p", { root: scratch, programDir: PROGRAM });
    try {
      bare.init();
      bare.ok(["config", "set", "--secret", "kubeconfig"], {
        input: fs.readFileSync(cp!.kubeconfigPath, "utf8"),
      });
      bare.ok(["config", "set", "topolvmChartPath", path.join(scratch, "chart", "topolvm")]);
      const r = bare.run(["preview"], LONG);
      expect(r.code).not.toBe(0);
      expect(r.output).toMatch(/kubernetes/);
      expect(r.output).toMatch(/v?4\.32\.0/);
    } finally {
      bare.cleanup();
    }
  });
});

describe("pulumi preview", () => {
  it("shows LvmSystem, its objects, the TopoLVM chart and the NodeSet's, and writes nothing", async () => {
    const { output } = timed("preview", () => ws!.ok(["preview"], LONG));
    for (const type of [
      "pulumi-lvm:index:LvmSystem",
      "pulumi-lvm:index:NodeSet",
      "kubernetes:core/v1:Namespace",
      "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch",
      "kubernetes:apps/v1:DaemonSet",
      "kubernetes:apps/v1:Deployment",
      "kubernetes:rbac.authorization.k8s.io/v1:ClusterRole",
      "kubernetes:helm.sh/v4:Chart",
      "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet",
      "kubernetes:storage.k8s.io/v1:StorageClass",
    ])
      expect(output).toContain(type);
    expect(output).toMatch(/\d+ to create/);
    expect(await get("v1", "Namespace", NAMESPACE)).toBeUndefined();
    expect(
      await get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "lvmnodesets.lvm.topolvm.io"),
    ).toBeUndefined();
  });
});

describe("pulumi up", () => {
  it("creates every object as declared; the test reads each back from the apiserver", async () => {
    timed("up", () => ws!.ok(["up", "--yes"], LONG));
    const { deployment } = ws!.exportState();
    declared = kubernetesObjects(deployment.resources ?? []);
    // LvmSystem's and the NodeSet's objects, and the chart's.
    expect(declared.length).toBeGreaterThan(30);
    expect(await missingObjects(declared, get)).toEqual([]);

    // The parts named in the issue, field by field.
    const ns = await get("v1", "Namespace", NAMESPACE);
    expect(ns.metadata.labels).toMatchObject({ "pod-security.kubernetes.io/enforce": "privileged" });
    for (const crd of ["lvmnodesets.lvm.topolvm.io", "lvmnodes.lvm.topolvm.io"]) {
      const got = await get("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd);
      expect(got.status.conditions).toEqual(
        expect.arrayContaining([expect.objectContaining({ type: "Established", status: "True" })]),
      );
    }
    const daemonSets = declared.filter((o) => o.kind === "DaemonSet" && o.namespace === NAMESPACE);
    const agent = await Promise.all(daemonSets.map((o) => get("apps/v1", "DaemonSet", o.name, NAMESPACE)));
    const ours = agent.find((d) =>
      d.spec.template.spec.containers.some((c: Json) => c.image === "pulumi-lvm:e2e"),
    );
    expect(ours).toBeDefined();
    expect(ours.spec.template.spec.hostPID).toBe(true);
    expect(ours.metadata.annotations).toMatchObject({ "pulumi.com/skipAwait": "true" }); // the test-only transformation, visibly
    const deployments = declared.filter((o) => o.kind === "Deployment");
    const operator = (
      await Promise.all(deployments.map((o) => get("apps/v1", "Deployment", o.name, o.namespace)))
    ).find((d) => d.spec.template.spec.containers.some((c: Json) => c.image === "pulumi-lvm:e2e"));
    expect(operator?.spec.template.spec.containers[0].command).toEqual(["pulumi-lvm", "operator"]);
    expect(operator.metadata.labels).toMatchObject({ "app.kubernetes.io/name": "pulumi-lvm-operator" });
    // LvmSystem's network fences (docs/components.md, "Network policies"), selecting the agents and
    // the operator (stored only: this tier has no pod network to enforce them on).
    const policies = declared.filter((o) => o.kind === "NetworkPolicy").map((o) => o.name);
    expect(policies).toEqual(expect.arrayContaining(["lvm-agent", "lvm-operator"]));
    const fence = async (name: string) =>
      (await get("networking.k8s.io/v1", "NetworkPolicy", name, NAMESPACE)).spec.podSelector.matchLabels;
    expect(await fence("lvm-agent")).toEqual(ours.spec.selector.matchLabels);
    expect(await fence("lvm-operator")).toEqual(operator.spec.selector.matchLabels);
    // TopoLVM from the chart on disk: its CSIDriver, controller, node plugin and one lvmd for node set e2e.
    expect(await get("storage.k8s.io/v1", "CSIDriver", "topolvm.io")).toBeDefined();
    expect(deployments.map((d) => d.name)).toEqual(expect.arrayContaining(["topolvm-controller"]));
    expect(daemonSets.map((d) => d.name)).toEqual(expect.arrayContaining(["topolvm-node"]));
    expect(daemonSets.some((d) => /lvmd/.test(d.name))).toBe(true);
    // The NodeSet's custom resource and class.
    const nodeSet = await get("lvm.topolvm.io/v2alpha1", "LVMNodeSet", "e2e", NAMESPACE);
    expect(nodeSet.spec.template.deviceClasses).toEqual([
      expect.objectContaining({ name: "bulk", strategy: "Thick" }),
    ]);
    const classes = declared.filter((o) => o.kind === "StorageClass");
    expect(classes).toHaveLength(1);
    expect((await get("storage.k8s.io/v1", "StorageClass", classes[0]!.name)).provisioner).toBe("topolvm.io");
  });

  it("a second preview shows no changes (--expect-no-changes)", () => {
    const { output } = timed("preview-again", () => ws!.ok(["preview", "--expect-no-changes"], LONG));
    expect(output).not.toMatch(/to create|to update|to delete|to replace/);
  });

  it("holds no certificate or key in the state; the operator's caBundle (its own field manager) survives refresh, preview and up", async () => {
    const { deployment } = ws!.exportState();
    // The operator issues the serving certificates (src/operator/certificates): LvmSystem's
    // resources in the state hold none, and no Secret (TopoLVM's chart is not ours to judge here).
    const ours = (deployment.resources ?? []).filter((r) => r.urn.includes("pulumi-lvm:index:LvmSystem$"));
    expect(ours.length).toBeGreaterThan(10);
    expect(JSON.stringify(ours)).not.toMatch(/BEGIN (CERTIFICATE|PRIVATE KEY|RSA PRIVATE KEY)/);
    expect(ours.filter((r) => r.type === "kubernetes:core/v1:Secret").map((r) => r.urn)).toEqual([]);
    const vwc = declared.find((o) => o.kind === "ValidatingWebhookConfiguration");
    expect(vwc).toBeDefined();
    const path = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${vwc!.name}`;
    // A connection of its own for each read and write: the pulumi commands block this process long
    // enough for the API server to close a pooled one (EPIPE).
    const fresh = { newConnection: true };
    const read = async () => (await cp!.request("GET", path, undefined, undefined, fresh)).body;
    const live = await read();
    expect(live.webhooks.map((w: Json) => w.clientConfig.caBundle)).toEqual(
      live.webhooks.map(() => undefined),
    );
    // What the operator does (issuer.ts): server-side apply of caBundle alone, forced, as pulumi-lvm-operator.
    const caBundle = Buffer.from(cp!.caPem).toString("base64");
    const applied = await cp!.request(
      "PATCH",
      `${path}?fieldManager=pulumi-lvm-operator&force=true`,
      {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: vwc!.name },
        webhooks: live.webhooks.map((w: Json) => ({ name: w.name, clientConfig: { caBundle } })),
      },
      undefined,
      { contentType: "application/apply-patch+yaml", ...fresh },
    );
    expect(applied.status).toBe(200);
    timed("refresh", () => ws!.ok(["refresh", "--yes"], LONG));
    const { output } = timed("preview-after-ca", () => ws!.ok(["preview", "--expect-no-changes"], LONG));
    expect(output).not.toMatch(/to create|to update|to delete|to replace/);
    timed("up-after-ca", () => ws!.ok(["up", "--yes"], LONG));
    const after = await read();
    expect(after.webhooks.map((w: Json) => w.clientConfig.caBundle)).toEqual(
      live.webhooks.map(() => caBundle),
    );
  });

  it("keeps the kubeconfig (the admin's token) out of the state in plain text", () => {
    const { text, deployment } = ws!.exportState();
    const token = cp!.tokens.admin;
    expect(text).not.toContain(token);
    for (const { file, text: t } of PulumiWorkspace.filesUnder(ws!.backend)) {
      if (t.includes(token)) throw new Error(`the admin token is in plain text in ${file}`);
    }
    for (const line of ws!.transcript) expect(line).not.toContain(token);
    // The provider's and the NodeSet's (cluster mode) kubeconfig inputs are secrets.
    const provider = (deployment.resources ?? []).find(
      (r) => r.type === "pulumi:providers:kubernetes" && r.urn.endsWith("::cluster"),
    );
    expect(JSON.stringify(provider?.inputs?.kubeconfig)).toContain(SECRET_SIG_KEY);
    const disks = (deployment.resources ?? []).find((r) => r.type.endsWith(":NodeSetDisks"));
    expect(disks).toBeDefined();
    expect(JSON.stringify((disks!.inputs as Json).cluster)).toContain(SECRET_SIG_KEY);
    // Cluster mode stores no agent token at all (it requests one per operation): no agents map.
    expect((disks!.inputs as Json).agents).toBeUndefined();
  });
});

describe("pulumi destroy", () => {
  it("removes every object it created except the CRDs it retains: ours and TopoLVM's LogicalVolume", async () => {
    timed("destroy", () => ws!.ok(["destroy", "--yes"], LONG));
    // Ours (retainCrdsOnDelete) and TopoLVM's (helm.sh/resource-policy: keep, which Topolvm sets) stay.
    expect(await leftAfterDestroy(declared, get)).toEqual([]);
    expect(await get("v1", "Namespace", NAMESPACE)).toBeUndefined();
  });
});
