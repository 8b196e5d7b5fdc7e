/**
 * `pulumi-lvm manifests` against a real kube-apiserver (test/env/cluster.ts, the binaries
 * test/env/install.sh builds): every object it prints is accepted by server-side apply with strict
 * field validation (as `kubectl apply --server-side` sends it), a second apply changes nothing, and
 * the caBundle the operator sets under its own field manager survives the next apply.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import YAML from "yaml";
import { CA_BUNDLE_FIELD_MANAGER } from "../../src/operator/certificates/issuer";
import { run } from "../../src/cli/manifests";
import { run as runBundle } from "../../src/cli/support-bundle";
import { runCaptured } from "../support/cli/captured-io";
import { startControlPlane, type ControlPlane, type Json } from "../env/cluster";

jest.setTimeout(120_000);

let cp: ControlPlane;
beforeAll(async () => {
  // As every cluster that runs the agents (a privileged DaemonSet) is configured.
  cp = await startControlPlane({ apiserverFlags: ["--allow-privileged=true"] });
}, 120_000);
afterAll(async () => {
  await cp?.stop();
});

/** The field manager a GitOps tool or kubectl would apply as. */
const MANAGER = "manifests-test";

type Obj = { apiVersion: string; kind: string; metadata: { name: string; namespace?: string } };

async function render(argv: string[], files: Record<string, string> = {}): Promise<Obj[]> {
  const r = await runCaptured((io) => run(io), argv, files);
  expect(r).toMatchObject({ code: 0, stderr: "" });
  return YAML.parseAllDocuments(r.stdout).map((d) => d.toJSON() as Obj);
}

/** Each kind's REST path, from the API server's own discovery (no table of plurals to keep). */
const discovered = new Map<string, { plural: string; namespaced: boolean }>();
async function objectPath(o: Obj): Promise<string> {
  const base = o.apiVersion.includes("/") ? `/apis/${o.apiVersion}` : `/api/${o.apiVersion}`;
  if (!discovered.has(`${o.apiVersion} ${o.kind}`)) {
    const r = await cp.request("GET", base);
    expect(r.status).toBe(200);
    for (const res of r.body.resources as Array<{ name: string; kind: string; namespaced: boolean }>)
      if (!res.name.includes("/"))
        discovered.set(`${o.apiVersion} ${res.kind}`, { plural: res.name, namespaced: res.namespaced });
  }
  const found = discovered.get(`${o.apiVersion} ${o.kind}`);
  if (!found) throw new Error(`the API server does not serve ${o.kind} in ${o.apiVersion}`);
  const ns = found.namespaced ? `/namespaces/${o.metadata.namespace}` : "";
  return `${base}${ns}/${found.plural}/${o.metadata.name}`;
}

/**
 * Server-side apply of each object in order; returns each one's resourceVersion once all are applied
 * (read back: a CRD's own status, Established, moves its version after the apply answered).
 */
async function applyAll(objects: readonly Obj[], manager = MANAGER): Promise<Map<string, string>> {
  const paths: string[] = [];
  for (const o of objects) {
    const at = await objectPath(o);
    const r = await cp.request(
      "PATCH",
      `${at}?fieldManager=${manager}&fieldValidation=Strict`,
      o,
      undefined,
      {
        contentType: "application/apply-patch+yaml",
      },
    );
    if (r.status !== 200 && r.status !== 201)
      throw new Error(`apply ${o.kind} ${o.metadata.name}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    if (o.kind === "CustomResourceDefinition") await established(o.metadata.name);
    paths.push(at);
  }
  const versions = new Map<string, string>();
  for (const at of paths) versions.set(at, (await cp.request("GET", at)).body.metadata.resourceVersion);
  return versions;
}

async function established(name: string): Promise<void> {
  for (const deadline = Date.now() + 20_000; Date.now() < deadline;) {
    const r = await cp.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    if (r.body?.status?.conditions?.some((c: Json) => c.type === "Established" && c.status === "True"))
      return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`CRD ${name} not Established after 20 s`);
}

describe.each([
  ["the defaults", [] as string[], {}],
  [
    "another name and namespace, placement and resources",
    ["--name", "store", "--namespace", "storage", "--values", "v.yaml"],
    {
      "v.yaml": YAML.stringify({
        agentResources: { requests: { cpu: "50m", memory: "128Mi" } },
        nodeSelector: { "storage.example.com/disks": "true" },
        tolerations: [{ operator: "Exists" }],
        clusterModeSubjects: [{ kind: "Group", name: "platform-deployers" }],
        operator: {
          nodeSelector: { "node-role.kubernetes.io/control-plane": "" },
          resources: { limits: { memory: "512Mi" } },
        },
        networkPolicies: { controlPlane: { cidrs: ["10.0.0.0/28"] } },
      }),
    },
  ],
])("%s", (_, argv, files) => {
  let objects: Obj[];
  let first: Map<string, string>;
  beforeAll(async () => {
    objects = await render(argv, files);
    first = await applyAll(objects);
  });

  test("every object is accepted by server-side apply, strict field validation", () => {
    expect(first.size).toBe(objects.length);
    expect(objects.map((o) => o.kind)).toEqual(
      expect.arrayContaining([
        "Namespace",
        "CustomResourceDefinition",
        "DaemonSet",
        "Deployment",
        "ValidatingWebhookConfiguration",
      ]),
    );
  });

  test("applied a second time, nothing changes (every resourceVersion stays)", async () => {
    expect(await applyAll(objects)).toEqual(first);
  });

  test("the caBundle the operator sets (its own field manager) stays through the next apply", async () => {
    const webhook = objects.find((o) => o.kind === "ValidatingWebhookConfiguration")!;
    const at = await objectPath(webhook);
    const caBundle = Buffer.from(cp.caPem).toString("base64");
    const live = await cp.request("GET", at);
    // What the operator's certificate issuer applies (src/operator/certificates/issuer.ts).
    const set = await cp.request(
      "PATCH",
      `${at}?fieldManager=${CA_BUNDLE_FIELD_MANAGER}`,
      {
        apiVersion: webhook.apiVersion,
        kind: webhook.kind,
        metadata: { name: webhook.metadata.name },
        webhooks: live.body.webhooks.map((w: Json) => ({ name: w.name, clientConfig: { caBundle } })),
      },
      undefined,
      { contentType: "application/apply-patch+yaml" },
    );
    expect(set.status).toBe(200);
    const again = await applyAll(objects);
    expect(again.get(at)).toBe(set.body.metadata.resourceVersion);
    expect(set.body.metadata.resourceVersion).not.toBe(live.body.metadata.resourceVersion);
    const after = await cp.request("GET", at);
    expect(after.body.webhooks.map((w: Json) => w.clientConfig.caBundle)).toEqual(
      live.body.webhooks.map(() => caBundle),
    );
  });
});

/*
 * `pulumi-lvm support-bundle` against the same API server, the system just applied: the real
 * kubeconfig path, real discovery and real 404s (no TopoLVM, no snapshot API here), and a token planted
 * in an Event that must not reach the bundle.
 */
describe("support-bundle, through a kubeconfig, against the applied system", () => {
  test("collects the system's objects, records what the cluster lacks, and keeps no credential", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bundle-"));
    const token = fs.readFileSync(cp.kubeconfigPath, "utf8").match(/token: (\S+)/)![1]!;
    const jwt = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJzeXN0ZW06c2EifQ.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
    const planted = await cp.request("POST", "/api/v1/namespaces/lvm-system/events", {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: "planted", namespace: "lvm-system" },
      involvedObject: {
        apiVersion: "lvm.topolvm.io/v2alpha1",
        kind: "LVMNodeSet",
        name: "planted",
        namespace: "lvm-system",
      },
      firstTimestamp: new Date().toISOString(),
      lastTimestamp: new Date().toISOString(),
      count: 1,
      source: { component: "test" },
      reason: "Planted",
      message: `Authorization: Bearer ${token}; projected ${jwt}`,
      type: "Warning",
    });
    expect([planted.status, planted.status === 201 ? "" : JSON.stringify(planted.body)]).toEqual([201, ""]);
    const out = path.join(dir, "bundle.tgz");
    const r = await runCaptured((io) => runBundle(io), ["-o", out, "--kubeconfig", cp.kubeconfigPath]);
    expect(r.code).toBe(0);
    execFileSync("tar", ["-xzf", out, "-C", dir]);
    const manifest = JSON.parse(fs.readFileSync(path.join(dir, "support-bundle/manifest.json"), "utf8"));
    const names = (items: Array<{ what: string }>) => items.map((i) => i.what).join("\n");
    console.log(
      `bundle manifest: ${JSON.stringify({ collected: names(manifest.collected), absent: manifest.absent, failed: manifest.failed }, null, 1)}`,
    );
    expect(names(manifest.collected)).toMatch(/LVMNodeSet/);
    expect(names(manifest.collected)).toMatch(/DaemonSet/);
    expect(manifest.failed).toEqual([]);
    expect(names(manifest.absent)).toMatch(/LogicalVolume/);
    const files = execFileSync("find", [dir, "-type", "f", "!", "-name", "bundle.tgz"], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
    const all = files.map((f) => fs.readFileSync(f, "utf8")).join("\n");
    expect(all).toContain("Planted");
    expect(all).not.toContain(token);
    expect(all).not.toContain(jwt);
    fs.rmSync(dir, { recursive: true, force: true });
  });
});
