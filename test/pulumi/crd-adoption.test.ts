/**
 * Our CRDs kept, adopted and upgraded (docs/components.md, "CRDs: kept, adopted, upgraded"), with
 * the real engine and the REAL Kubernetes provider (pulumi-resource-kubernetes 4.32.0, built from
 * source by test/pulumi/install-kubernetes.sh) against a real kube-apiserver (test/env):
 *
 *   1. `up` of a first stack creates the CRDs;
 *   2. its `destroy` leaves them, and an LVMNodeSet in them survives;
 *   3. `up` of a second stack adopts them (the same objects: a plain CustomResourceDefinition is
 *      refused there with "already exists", the journey's step 6b found), and a preview after it is clean;
 *   4. a changed CRD (a schema description, a printer column) is applied to them, and dropped again;
 *   5. `retainCrdsOnDelete: false`: plain CRDs, refused while kept ones exist, created once they are
 *      gone, and deleted by `destroy`;
 *   6. a stack the previous release made (plain CRDs kept on delete) upgraded to this one: the
 *      CRDs adopted in place, nothing deleted.
 *
 * The program is test/pulumi/crd-adoption-program (an LvmSystem without the operator and TopoLVM).
 * Every outcome is read from the API server with the test's own requests, never through our code.
 * Missing binaries (the CLI, the plugin, the apiserver) are a failure saying how to build them, never a skip.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as YAML from "yaml";
import { repoRoot, startControlPlane, type ControlPlane, type Json } from "../env/cluster";
import { PulumiWorkspace, requirePulumiBinaries } from "./cli";
import { requireKubernetesPlugin } from "./kubernetes-plugin";
import { Timings } from "../timings";

jest.setTimeout(1_800_000);

const PROGRAM = path.join(__dirname, "crd-adoption-program");
const CRDS = ["lvmnodesets.lvm.topolvm.io", "lvmnodes.lvm.topolvm.io"] as const;
const PATCH_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch";
const PLAIN_TYPE = "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition";
/** The namespace of the LVMNodeSet that must outlive the stacks (not an LvmSystem's: that one goes with it). */
const KEEP_NS = "keep";
const SURVIVOR = `/apis/lvm.topolvm.io/v2alpha1/namespaces/${KEEP_NS}/lvmnodesets/survivor`;
/** Under load (2 cores shared) an up of ~15 objects takes a minute or more. */
const LONG = { timeoutMs: 900_000 };

let cp: ControlPlane | undefined;
let scratch: string;
let pluginDir: string;
const stacks: PulumiWorkspace[] = [];
const timings = new Timings();
const timed = <T>(name: string, f: () => T): T => timings.timed(name, f);

/** A new stack of the program in its own workspace (a new backend: another team's, another day's). */
function newStack(name: string, config: Record<string, string>): PulumiWorkspace {
  const ws = new PulumiWorkspace(name, randomBytes(12).toString("hex"), {
    root: scratch,
    programDir: PROGRAM,
    plugins: [pluginDir],
  });
  stacks.push(ws);
  ws.init();
  // From stdin: the kubeconfig (the admin's bearer token) is on no command line.
  ws.ok(["config", "set", "--secret", "kubeconfig"], { input: fs.readFileSync(cp!.kubeconfigPath, "utf8") });
  for (const [k, v] of Object.entries(config)) ws.ok(["config", "set", k, v]);
  return ws;
}

beforeAll(async () => {
  requirePulumiBinaries();
  pluginDir = requireKubernetesPlugin();
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-crd-adoption-"));
  cp = await startControlPlane({ controllerManager: true, apiserverFlags: ["--allow-privileged=true"] });
}, 600_000);

afterAll(async () => {
  await cp?.stop();
  for (const ws of stacks) ws.cleanup();
  if (scratch) fs.rmSync(scratch, { recursive: true, force: true });
  console.log(timings.table("crd adoption, seconds"));
});

/* ----------------------------------------------------------------- the test's own reads ---- */

async function get(urlPath: string): Promise<Json | undefined> {
  const r = await cp!.request("GET", urlPath);
  if (r.status === 404) return undefined;
  if (r.status !== 200) throw new Error(`GET ${urlPath}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}
const crd = (name: string) => get(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);

async function waitFor<T>(what: string, f: () => Promise<T>, ok: (v: T) => boolean, ms = 120_000) {
  const until = Date.now() + ms;
  for (;;) {
    const v = await f();
    if (ok(v)) return v;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}: last ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const established = (c: Json | undefined) =>
  !!c?.status?.conditions?.some((x: Json) => x.type === "Established" && x.status === "True");
/** Field managers that applied (server-side apply) to the object. */
const appliers = (o: Json) =>
  ((o.metadata.managedFields ?? []) as Json[]).filter((m) => m.operation === "Apply").map((m) => m.manager);
const printerColumns = (c: Json) =>
  (c.spec.versions[0].additionalPrinterColumns ?? []).map((p: Json) => p.name) as string[];
const types = (ws: PulumiWorkspace) => (ws.exportState().deployment.resources ?? []).map((r) => r.type);

/** deploy/crds copied, LVMNodeSet's CRD changed as a newer version of the package might change it. */
function upgradedCrds(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  for (const f of fs.readdirSync(path.join(repoRoot, "deploy", "crds"))) {
    const text = fs.readFileSync(path.join(repoRoot, "deploy", "crds", f), "utf8");
    if (!f.includes("lvmnodesets")) {
      fs.writeFileSync(path.join(dir, f), text);
      continue;
    }
    const doc = YAML.parse(text) as Json;
    const version = doc.spec.versions[0];
    version.schema.openAPIV3Schema.description = "LVMNodeSet, upgraded by crd-adoption.test.ts";
    version.additionalPrinterColumns = [
      ...(version.additionalPrinterColumns ?? []),
      { name: "Upgraded", type: "string", jsonPath: ".metadata.name" },
    ];
    fs.writeFileSync(path.join(dir, f), YAML.stringify(doc));
  }
  return dir;
}

/* ------------------------------------------------------------------------------ tests ---- */

let first: PulumiWorkspace;
let second: PulumiWorkspace;
const uids: Record<string, string> = {};

describe("1-2. a first stack: up creates the CRDs, destroy keeps them and what is in them", () => {
  it("up creates both CRDs, Established, applied as the field manager pulumi-lvm", async () => {
    first = newStack("first", { namespace: "lvm-first" });
    timed("up (first)", () => first.ok(["up", "--yes", "--skip-preview"], LONG));
    expect(types(first).filter((t) => t.includes("CustomResourceDefinition"))).toEqual([
      PATCH_TYPE,
      PATCH_TYPE,
    ]);
    for (const name of CRDS) {
      const got = await crd(name);
      expect(established(got)).toBe(true);
      expect(appliers(got!)).toEqual(["pulumi-lvm"]);
      uids[name] = got!.metadata.uid;
    }
  });

  it("destroy deletes the stack's other objects and leaves the CRDs and an LVMNodeSet in them", async () => {
    expect((await cp!.request("POST", "/api/v1/namespaces", { metadata: { name: KEEP_NS } })).status).toBe(
      201,
    );
    const created = await cp!.request("POST", path.dirname(SURVIVOR), {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: { name: "survivor", namespace: KEEP_NS },
      spec: {
        nodeSelector: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "keep", operator: "In", values: ["true"] }] }],
        },
        template: {
          volumeGroups: [
            {
              name: "vg-keep",
              deviceSelector: {
                deviceSelectorTerms: [
                  { matchExpressions: [{ key: "serial", operator: "In", values: ["KEEP-1"] }] },
                ],
              },
            },
          ],
          deviceClasses: [{ name: "keep", strategy: "Thick", volumeGroup: "vg-keep", default: true }],
        },
      },
    });
    expect([created.status, created.body?.message]).toEqual([201, undefined]);

    timed("destroy (first)", () => first.ok(["destroy", "--yes", "--skip-preview"], LONG));
    expect(first.exportState().deployment.resources ?? []).toEqual([]);
    expect(await get("/api/v1/namespaces/lvm-first")).toBeUndefined();
    for (const name of CRDS) {
      const got = await crd(name);
      expect(got?.metadata.uid).toBe(uids[name]);
      expect(got?.metadata.deletionTimestamp).toBeUndefined();
    }
    expect((await get(SURVIVOR))?.metadata.deletionTimestamp).toBeUndefined();
  });
});

describe("3. a second stack adopts the kept CRDs", () => {
  it('up succeeds (no "already exists"); the CRDs are the same objects, the LVMNodeSet untouched', async () => {
    second = newStack("second", { namespace: "lvm-second" });
    const r = timed("up (second, adopting)", () => second.run(["up", "--yes", "--skip-preview"], LONG));
    expect(r.output).not.toMatch(/already exists/);
    expect(r.code).toBe(0);
    expect(types(second).filter((t) => t.includes("CustomResourceDefinition"))).toEqual([
      PATCH_TYPE,
      PATCH_TYPE,
    ]);
    for (const name of CRDS) {
      const got = await crd(name);
      expect(got?.metadata.uid).toBe(uids[name]);
      expect(established(got)).toBe(true);
      expect(appliers(got!)).toEqual(["pulumi-lvm"]);
    }
    const survivor = await get(SURVIVOR);
    expect(survivor?.spec.template.deviceClasses).toEqual([expect.objectContaining({ name: "keep" })]);
  });

  it("a preview after it shows no changes (--expect-no-changes)", () => {
    const { output } = timed("preview (second)", () =>
      second.ok(["preview", "--expect-no-changes", "--diff"], LONG),
    );
    expect(output).not.toMatch(/to create|to update|to delete|to replace/);
  });
});

describe("4. a changed CRD in the package is applied to the existing one", () => {
  it("a new schema description and printer column reach the CRD; the object and the LVMNodeSet stay", async () => {
    const before = (await crd("lvmnodesets.lvm.topolvm.io"))!;
    expect(printerColumns(before)).not.toContain("Upgraded");
    second.ok(["config", "set", "crdDirectory", upgradedCrds(path.join(scratch, "crds-upgraded"))]);
    timed("up (second, upgraded CRD)", () => second.ok(["up", "--yes", "--skip-preview"], LONG));
    const after = (await crd("lvmnodesets.lvm.topolvm.io"))!;
    expect(after.metadata.uid).toBe(uids["lvmnodesets.lvm.topolvm.io"]);
    expect(after.spec.versions[0].schema.openAPIV3Schema.description).toBe(
      "LVMNodeSet, upgraded by crd-adoption.test.ts",
    );
    expect(printerColumns(after)).toEqual([...printerColumns(before), "Upgraded"]);
    expect(Number(after.metadata.generation)).toBeGreaterThan(Number(before.metadata.generation));
    expect(await get(SURVIVOR)).toBeDefined();
  });

  it("what the package's CRD drops again is removed (an update replaces the CRD)", async () => {
    second.ok(["config", "rm", "crdDirectory"]);
    timed("up (second, CRD as shipped)", () => second.ok(["up", "--yes", "--skip-preview"], LONG));
    const shipped = YAML.parse(
      fs.readFileSync(path.join(repoRoot, "deploy", "crds", "lvm.topolvm.io_lvmnodesets.yaml"), "utf8"),
    ) as Json;
    const got = (await crd("lvmnodesets.lvm.topolvm.io"))!;
    expect(printerColumns(got)).toEqual(printerColumns(shipped));
    expect(got.spec.versions[0].schema.openAPIV3Schema.description).toBe(
      shipped.spec.versions[0].schema.openAPIV3Schema.description,
    );
  });

  it("destroy leaves them again", async () => {
    timed("destroy (second)", () => second.ok(["destroy", "--yes", "--skip-preview"], LONG));
    for (const name of CRDS) expect((await crd(name))?.metadata.uid).toBe(uids[name]);
    expect(await get(SURVIVOR)).toBeDefined();
  });
});

describe("5. retainCrdsOnDelete: false: plain CRDs, deleted with the stack", () => {
  let plain: PulumiWorkspace;

  it('up is refused with "already exists" while kept CRDs are in the cluster', () => {
    plain = newStack("plain", { namespace: "lvm-plain", retainCrdsOnDelete: "false" });
    const r = timed("up (plain, CRDs kept)", () => plain.run(["up", "--yes", "--skip-preview"], LONG));
    expect(r.code).not.toBe(0);
    expect(r.output).toMatch(
      /customresourcedefinitions\.apiextensions\.k8s\.io "lvmnodes(ets)?\.lvm\.topolvm\.io" already exists/,
    );
  });

  it("once they are deleted, up creates plain CRDs and destroy deletes them", async () => {
    for (const name of CRDS) {
      const r = await cp!.request(
        "DELETE",
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      );
      expect(r.status).toBe(200);
    }
    await waitFor(
      "the kept CRDs gone",
      () => Promise.all(CRDS.map(crd)),
      (all) => all.every((c) => !c),
    );
    expect(await get(SURVIVOR)).toBeUndefined();

    timed("up (plain)", () => plain.ok(["up", "--yes", "--skip-preview"], LONG));
    expect(types(plain).filter((t) => t.includes("CustomResourceDefinition"))).toEqual([
      PLAIN_TYPE,
      PLAIN_TYPE,
    ]);
    for (const name of CRDS) {
      const got = await crd(name);
      expect(established(got)).toBe(true);
      expect(appliers(got!)).not.toContain("pulumi-lvm");
      expect(got!.metadata.annotations?.["pulumi.com/patchForce"]).toBeUndefined();
    }

    timed("destroy (plain)", () => plain.ok(["destroy", "--yes", "--skip-preview"], LONG));
    await waitFor(
      "the plain CRDs deleted",
      () => Promise.all(CRDS.map(crd)),
      (all) => all.every((c) => !c),
    );
  });
});

describe("6. a stack made by the previous release (plain CRDs, kept) upgraded to this one", () => {
  let old: PulumiWorkspace;
  const before: Record<string, string> = {};

  it("its next up adopts the CRDs as Patches and drops the plain resources without deleting them", async () => {
    // What the previous release declared: plain CRDs, kept on delete (the program's previousRelease).
    old = newStack("previous", {
      namespace: "lvm-previous",
      retainCrdsOnDelete: "false",
      previousRelease: "true",
    });
    timed("up (previous release)", () => old.ok(["up", "--yes", "--skip-preview"], LONG));
    expect(types(old).filter((t) => t.includes("CustomResourceDefinition"))).toEqual([
      PLAIN_TYPE,
      PLAIN_TYPE,
    ]);
    for (const name of CRDS) before[name] = (await crd(name))!.metadata.uid;

    old.ok(["config", "rm", "retainCrdsOnDelete"]);
    old.ok(["config", "rm", "previousRelease"]);
    const r = timed("up (upgraded to this release)", () => old.ok(["up", "--yes", "--skip-preview"], LONG));
    expect(r.output).toMatch(/2 deleted/);
    expect(types(old).filter((t) => t.includes("CustomResourceDefinition"))).toEqual([
      PATCH_TYPE,
      PATCH_TYPE,
    ]);
    for (const name of CRDS) {
      const got = await crd(name);
      expect(got?.metadata.uid).toBe(before[name]);
      expect(got?.metadata.deletionTimestamp).toBeUndefined();
      expect(appliers(got!)).toContain("pulumi-lvm");
    }
  });

  it("destroy then keeps them", async () => {
    timed("destroy (upgraded)", () => old.ok(["destroy", "--yes", "--skip-preview"], LONG));
    for (const name of CRDS) expect((await crd(name))?.metadata.uid).toBe(before[name]);
  });
});
