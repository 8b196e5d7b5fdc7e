/**
 * Integration tests against a real kube-apiserver + etcd (+ kube-controller-manager), started by
 * test/env/cluster.ts from the binaries test/env/install.sh builds. Missing binaries, CRDs or
 * fixtures make these tests FAIL with a message saying what to do; they are never skipped.
 *
 *   bash test/env/install.sh && npx jest --selectProjects integration test/k8s
 */
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { ControlPlane, Json, repoRoot, startControlPlane } from "../env/cluster";
import {
  networkPolicyManifests,
  type FencedSystem,
  type NetworkPolicySettings,
} from "../../src/components/network-policies";

jest.setTimeout(60_000);

let cp: ControlPlane;

beforeAll(async () => {
  cp = await startControlPlane({ controllerManager: true });
  const t = cp.timings;
  console.log(
    `control plane ready: etcd ${t.etcdMs} ms, kube-apiserver /readyz ${t.apiserverMs} ms, ` +
      `kube-controller-manager ${t.controllerManagerMs} ms, total ${t.totalMs} ms (${cp.url})`,
  );
}, 120_000);

afterAll(async () => {
  await cp?.stop();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `fn` until it returns a truthy value or `ms` passes; returns the last value. */
async function eventually<T>(fn: () => Promise<T>, ms = 10_000, every = 100): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (v || Date.now() > deadline) return v;
    await sleep(every);
  }
}

async function mustCreate(urlPath: string, body: unknown): Promise<Json> {
  const r = await cp.request("POST", urlPath, body);
  if (r.status !== 201) throw new Error(`POST ${urlPath}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

async function createNamespace(name: string): Promise<void> {
  await mustCreate("/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });
}

async function tokenReview(token: string, audiences?: string[]): Promise<Json> {
  const r = await cp.request("POST", "/apis/authentication.k8s.io/v1/tokenreviews", {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenReview",
    spec: { token, ...(audiences ? { audiences } : {}) },
  });
  expect(r.status).toBe(201);
  return r.body.status;
}

/* --------------------------------------------------------------------- authentication ---- */

describe("authentication", () => {
  test("TokenReview: the agent's static token is authenticated as the agent; a bad token is not", async () => {
    const ok = await tokenReview(cp.tokens.agent);
    expect(ok.authenticated).toBe(true);
    expect(ok.user.username).toBe(cp.identities.agent.username);
    expect(ok.user.username).toMatch(/^system:serviceaccount:[^:]+:pulumi-lvm-agent$/);
    expect(ok.user.groups).toEqual(expect.arrayContaining(cp.identities.agent.groups));

    const bad = await tokenReview("not-a-token-" + "0".repeat(32));
    expect(bad.authenticated).toBeFalsy();
    expect(bad.user?.username).toBeUndefined();
  });

  test("TokenRequest: a bound service-account token is accepted for its audience only", async () => {
    await createNamespace("sa-tokens");
    await mustCreate("/api/v1/namespaces/sa-tokens/serviceaccounts", {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "lvm-agent" },
    });
    const r = await cp.request("POST", "/api/v1/namespaces/sa-tokens/serviceaccounts/lvm-agent/token", {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      spec: { audiences: ["pulumi-lvm-operator"], expirationSeconds: 600 },
    });
    expect(r.status).toBe(201);
    const token: string = r.body.status.token;
    expect(token.split(".")).toHaveLength(3); // a JWT

    const ok = await tokenReview(token, ["pulumi-lvm-operator"]);
    expect(ok.authenticated).toBe(true);
    expect(ok.user.username).toBe("system:serviceaccount:sa-tokens:lvm-agent");
    expect(ok.audiences).toEqual(["pulumi-lvm-operator"]);

    const other = await tokenReview(token, ["some-other-audience"]);
    expect(other.authenticated).toBeFalsy();
    expect(other.error).toMatch(/audience/i);

    // The token is not valid for the apiserver itself (audience is the operator's, not the apiserver's).
    const direct = await cp.request("GET", "/api/v1/namespaces/sa-tokens/serviceaccounts", undefined, token);
    expect(direct.status).toBe(401);
  });
});

/* ---------------------------------------------------------------------- authorization ---- */

describe("authorization (RBAC)", () => {
  async function sar(who: "agent" | "unprivileged", name: string): Promise<Json> {
    const id = cp.identities[who];
    const r = await cp.request("POST", "/apis/authorization.k8s.io/v1/subjectaccessreviews", {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: id.username,
        groups: id.groups,
        resourceAttributes: { group: "lvm.topolvm.io", resource: "lvmnodes", verb: "update", name },
      },
    });
    expect(r.status).toBe(201);
    return r.body.status;
  }

  test("SubjectAccessReview: the agent may update only its own LVMNode", async () => {
    const agentSA = cp.identities.agent.username.split(":"); // system:serviceaccount:<ns>:<name>
    await mustCreate("/apis/rbac.authorization.k8s.io/v1/clusterroles", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRole",
      metadata: { name: "test-lvmnode-node-a" },
      rules: [
        {
          apiGroups: ["lvm.topolvm.io"],
          resources: ["lvmnodes"],
          verbs: ["update"],
          resourceNames: ["node-a"],
        },
      ],
    });
    await mustCreate("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name: "test-lvmnode-node-a" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "test-lvmnode-node-a" },
      // A ServiceAccount subject: matches the agent's service-account-like static identity.
      subjects: [{ kind: "ServiceAccount", namespace: agentSA[2], name: agentSA[3] }],
    });

    // RBAC reads bindings through an informer: allow it a moment to see the new ones.
    const allowed = await eventually(async () => (await sar("agent", "node-a")).allowed === true);
    expect(allowed).toBe(true);
    const other = await sar("agent", "node-b");
    expect(other.allowed).toBe(false);
    const unprivileged = await sar("unprivileged", "node-a");
    expect(unprivileged.allowed).toBe(false);
  });

  test("the unprivileged user gets 403 listing secrets; admin gets 200", async () => {
    const denied = await cp.request("GET", "/api/v1/secrets", undefined, cp.tokens.unprivileged);
    expect(denied.status).toBe(403);
    expect(denied.body.reason).toBe("Forbidden");
    expect(denied.body.message).toContain('User "unprivileged" cannot list resource "secrets"');
    const admin = await cp.request("GET", "/api/v1/secrets");
    expect(admin.status).toBe(200);
  });
});

/* ------------------------------------------------------------------------------ nodes ---- */

describe("nodes", () => {
  test("createNode creates a labelled Node that can be read back and selected", async () => {
    const labels = { "topology.kubernetes.io/zone": "zone-a", "pulumi-lvm.io/storage": "true" };
    await cp.createNode("worker-1", labels);
    await cp.createNode("worker-2", { "topology.kubernetes.io/zone": "zone-b" });
    const r = await cp.request("GET", "/api/v1/nodes/worker-1");
    expect(r.status).toBe(200);
    expect(r.body.metadata.labels).toMatchObject(labels);
    const sel = await cp.request(
      "GET",
      `/api/v1/nodes?labelSelector=${encodeURIComponent("pulumi-lvm.io/storage=true")}`,
    );
    expect(sel.body.items.map((n: Json) => n.metadata.name)).toEqual(["worker-1"]);
  });
});

/* -------------------------------------------------------------- kube-controller-manager ---- */

describe("garbage collection (kube-controller-manager)", () => {
  test("deleting an owner deletes the objects that it owns", async () => {
    await createNamespace("gc");
    const owner = await mustCreate("/api/v1/namespaces/gc/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "owner" },
    });
    await mustCreate("/api/v1/namespaces/gc/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: {
        name: "owned",
        ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name: "owner", uid: owner.metadata.uid }],
      },
    });
    const del = await cp.request("DELETE", "/api/v1/namespaces/gc/configmaps/owner", {
      apiVersion: "v1",
      kind: "DeleteOptions",
      propagationPolicy: "Background",
    });
    expect(del.status).toBe(200);
    const gone = await eventually(
      async () => (await cp.request("GET", "/api/v1/namespaces/gc/configmaps/owned")).status === 404,
      30_000,
      250,
    );
    if (!gone)
      throw new Error(
        `owned ConfigMap not garbage-collected; controller-manager log:\n${cp.logTail("kube-controller-manager")}`,
      );
  });
});

/* ------------------------------------------------------------------------------- CRDs ---- */

const GROUP = "lvm.topolvm.io";
const VERSION = "v2alpha1";
// PULUMI_LVM_CRD_DIR: try CRDs from another directory (e.g. freshly generated ones) before committing them.
const CRD_DIR = process.env.PULUMI_LVM_CRD_DIR ?? path.join(repoRoot, "deploy", "crds");
const NODESET_FIXTURE = path.join(repoRoot, "test", "fixtures", "api", "proposal-lvmnodeset.yaml");

interface Served {
  crd: Json;
  /** List/collection path, e.g. /apis/lvm.topolvm.io/v2alpha1/lvmnodesets */
  collection: string;
}

/** Reads deploy/crds/*.yaml; throws (failing the tests) when the CRDs are not there. */
function loadCrds(): Json[] {
  const files = fs.existsSync(CRD_DIR)
    ? fs
        .readdirSync(CRD_DIR)
        .filter((f) => /\.ya?ml$/.test(f))
        .sort()
    : [];
  if (files.length === 0)
    throw new Error(
      `no CRDs: ${path.relative(repoRoot, CRD_DIR)}/*.yaml does not exist yet (generate them: npm run generate)`,
    );
  const crds = files.flatMap((f) =>
    YAML.parseAllDocuments(fs.readFileSync(path.join(CRD_DIR, f), "utf8"))
      .map((d) => d.toJS())
      .filter((o) => o?.kind === "CustomResourceDefinition"),
  );
  for (const kind of ["LVMNodeSet", "LVMNode"]) {
    const crd = crds.find((c) => c.spec?.names?.kind === kind);
    if (!crd)
      throw new Error(`${path.relative(repoRoot, CRD_DIR)} has no CustomResourceDefinition for kind ${kind}`);
    if (crd.spec.group !== GROUP)
      throw new Error(`the ${kind} CRD has group ${crd.spec.group}, expected ${GROUP}`);
    if (!crd.spec.versions?.some((v: Json) => v.name === VERSION && v.served))
      throw new Error(`the ${kind} CRD does not serve version ${VERSION}`);
  }
  return crds;
}

function loadNodeSetFixture(): Json {
  if (!fs.existsSync(NODESET_FIXTURE))
    throw new Error(`fixture ${path.relative(repoRoot, NODESET_FIXTURE)} does not exist yet`);
  const obj = YAML.parse(fs.readFileSync(NODESET_FIXTURE, "utf8"));
  if (obj?.kind !== "LVMNodeSet")
    throw new Error(`${NODESET_FIXTURE} is not an LVMNodeSet (kind ${obj?.kind})`);
  return obj;
}

/** The path (from the object root) of the first object that has a `deviceClasses` array. */
function findDeviceClassesParent(obj: Json, at: string[] = []): string[] | undefined {
  if (!obj || typeof obj !== "object" || Array.isArray(obj)) return undefined;
  if (Array.isArray(obj.deviceClasses)) return at;
  for (const [k, v] of Object.entries(obj)) {
    const found = findDeviceClassesParent(v, [...at, k]);
    if (found) return found;
  }
  return undefined;
}

function getAt(obj: Json, p: string[]): Json {
  return p.reduce((o, k) => o[k], obj);
}

describe("CRDs (deploy/crds) on a real apiserver", () => {
  const served: Record<string, Served> = {};
  const NS = "crd-tests";

  beforeAll(async () => {
    const crds = loadCrds();
    loadNodeSetFixture();
    for (const crd of crds) {
      const r = await cp.request("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
      if (r.status !== 201)
        throw new Error(
          `applying CRD ${crd.metadata?.name}: HTTP ${r.status}: ${r.body?.message ?? JSON.stringify(r.body)}`,
        );
    }
    for (const crd of crds) {
      const name = crd.metadata.name;
      const established = await eventually(async () => {
        const r = await cp.request("GET", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
        return r.body?.status?.conditions?.some((c: Json) => c.type === "Established" && c.status === "True");
      }, 20_000);
      if (!established) throw new Error(`CRD ${name} did not become Established in 20 s`);
      const namespaced = crd.spec.scope === "Namespaced";
      const collection = `/apis/${crd.spec.group}/${VERSION}/${namespaced ? `namespaces/${NS}/` : ""}${crd.spec.names.plural}`;
      const listable = await eventually(
        async () => (await cp.request("GET", collection)).status === 200,
        10_000,
      );
      if (!listable) throw new Error(`GET ${collection} did not answer 200 after the CRD was Established`);
      served[crd.spec.names.kind] = { crd, collection };
    }
    await createNamespace(NS);
  }, 60_000);

  function nodeSet(name: string): Json {
    const obj = structuredClone(loadNodeSetFixture());
    obj.metadata = { name };
    return obj;
  }

  test("the LVMNodeSet and LVMNode CRDs are Established and served", () => {
    expect(Object.keys(served).sort()).toEqual(expect.arrayContaining(["LVMNode", "LVMNodeSet"]));
  });

  test("the proposal's example LVMNodeSet is accepted", async () => {
    const { collection } = served.LVMNodeSet!;
    const obj = nodeSet("proposal-example");
    const r = await cp.request("POST", collection, obj);
    if (r.status !== 201)
      throw new Error(`example LVMNodeSet rejected: HTTP ${r.status}: ${r.body?.message}`);
    // Nothing the fixture says was pruned away by the structural schema.
    expect(r.body.spec).toEqual(obj.spec);
  });

  test("CEL rejects a device class that names a volume group that does not exist, naming the field", async () => {
    const { collection } = served.LVMNodeSet!;
    const obj = nodeSet("bad-volume-group");
    const parent = findDeviceClassesParent(obj.spec, ["spec"]);
    if (!parent) throw new Error("the example LVMNodeSet has no deviceClasses to break");
    getAt(obj, parent).deviceClasses[0].volumeGroup = "no-such-volume-group";
    const r = await cp.request("POST", collection, obj);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(`${parent.join(".")}.deviceClasses`);
    expect(r.body.message).toMatch(/volume ?group/i);
  });

  test("CEL rejects two default device classes, naming the field", async () => {
    const { collection } = served.LVMNodeSet!;
    const obj = nodeSet("two-defaults");
    const parent = findDeviceClassesParent(obj.spec, ["spec"]);
    if (!parent) throw new Error("the example LVMNodeSet has no deviceClasses to break");
    const tmpl = getAt(obj, parent);
    tmpl.deviceClasses[0].default = true;
    tmpl.deviceClasses.push({
      name: "second-default",
      strategy: "Thick",
      volumeGroup: tmpl.deviceClasses[0].volumeGroup,
      default: true,
    });
    const r = await cp.request("POST", collection, obj);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain(`${parent.join(".")}.deviceClasses`);
    expect(r.body.message).toMatch(/default/i);
  });

  test("status is ignored through the main resource and written through /status", async () => {
    const { crd, collection } = served.LVMNodeSet!;
    const version = crd.spec.versions.find((v: Json) => v.name === VERSION);
    expect(version.subresources?.status).toBeDefined();
    const statusProps = version.schema?.openAPIV3Schema?.properties?.status?.properties ?? {};
    let status: Json;
    let read: (s: Json) => unknown;
    if (statusProps.observedGeneration) {
      status = { observedGeneration: 42 };
      read = (s) => s?.observedGeneration;
    } else if (statusProps.conditions) {
      status = {
        conditions: [
          {
            type: "Ready",
            status: "False",
            reason: "SetByTest",
            message: "written by the status subresource test",
            lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, "Z"),
            observedGeneration: 1,
          },
        ],
      };
      read = (s) => s?.conditions?.[0]?.reason;
    } else {
      throw new Error("the LVMNodeSet status schema has neither observedGeneration nor conditions to write");
    }
    const expected = read(status);

    const created = await cp.request("POST", collection, nodeSet("status-test"));
    expect(created.status).toBe(201);
    const name = created.body.metadata.name;

    const viaMain = await cp.request("PUT", `${collection}/${name}`, { ...created.body, status });
    expect(viaMain.status).toBe(200);
    expect(read(viaMain.body.status)).not.toEqual(expected);
    expect(read((await cp.request("GET", `${collection}/${name}`)).body.status)).not.toEqual(expected);

    const viaStatus = await cp.request("PUT", `${collection}/${name}/status`, { ...viaMain.body, status });
    if (viaStatus.status !== 200)
      throw new Error(`PUT /status: HTTP ${viaStatus.status}: ${viaStatus.body?.message}`);
    expect(read((await cp.request("GET", `${collection}/${name}`)).body.status)).toEqual(expected);
    // ... and /status does not change the spec.
    const changedSpec = structuredClone(viaStatus.body);
    getAt(changedSpec, findDeviceClassesParent(changedSpec.spec, ["spec"]) ?? ["spec"]).deletionPolicy =
      "Delete";
    const specViaStatus = await cp.request("PUT", `${collection}/${name}/status`, changedSpec);
    expect(specViaStatus.status).toBe(200);
    expect(specViaStatus.body.spec).toEqual(viaStatus.body.spec);
  });
});

/**
 * LvmSystem's NetworkPolicies (src/components/network-policies.ts) as the API server validates and
 * stores them: a server-side dry run, then a real create read back unchanged. Validation only: this
 * control plane has no pod network, and the cluster tier's CNI (bridge) enforces no NetworkPolicy.
 */
describe("LvmSystem's NetworkPolicies on a real apiserver", () => {
  const ns = "lvm-netpol";
  const system = (name: string, operator = true): FencedSystem => ({
    namespace: ns,
    agent: { name: `${name}-agent`, labels: { "app.kubernetes.io/name": "pulumi-lvm-agent" }, port: 8080 },
    ...(operator
      ? {
          operator: {
            name: `${name}-operator`,
            labels: { "app.kubernetes.io/name": "pulumi-lvm-operator", "app.kubernetes.io/instance": name },
            metricsPort: 8081,
            webhookPort: 9443,
          },
        }
      : {}),
  });
  const collection = `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies`;

  beforeAll(() => createNamespace(ns));

  test.each([
    ["defaults", system("dflt"), {}],
    [
      "control plane CIDRs and pods, several monitoring namespaces",
      system("custom"),
      {
        controlPlane: {
          cidrs: ["10.0.0.0/28", "fd00::/120"],
          pods: [{ namespace: "kube-system", labels: { "k8s-app": "konnectivity-agent" } }],
        },
        monitoringNamespaces: ["monitoring", "prometheus"],
      },
    ],
    [
      "no sources at all (deny all ingress)",
      system("closed"),
      { controlPlane: { cidrs: [] }, monitoringNamespaces: [] },
    ],
    ["no operator", system("alone", false), {}],
  ] as Array<[string, FencedSystem, NetworkPolicySettings]>)(
    "%s: accepted by a dry run and stored as rendered",
    async (_, fenced, settings) => {
      for (const policy of networkPolicyManifests(fenced, settings)) {
        // An empty ingress list is stored as none: the same policy (policyTypes Ingress, nothing allowed).
        const { ingress, ...rest } = policy.spec;
        const stored = ingress.length ? policy.spec : rest;
        const dry = await cp.request("POST", `${collection}?dryRun=All`, policy);
        if (dry.status !== 201)
          throw new Error(`dry run of ${policy.metadata.name}: HTTP ${dry.status}: ${dry.body?.message}`);
        expect(dry.body.spec).toEqual(stored);
        expect((await cp.request("GET", `${collection}/${policy.metadata.name}`)).status).toBe(404); // a dry run stores nothing
        await mustCreate(collection, policy);
        const read = await cp.request("GET", `${collection}/${policy.metadata.name}`);
        expect(read.body.spec).toEqual(stored);
      }
    },
  );

  test("the same validation refuses a malformed policy (the dry run is not a rubber stamp)", async () => {
    const [policy] = networkPolicyManifests(system("bad"), { controlPlane: { cidrs: ["10.0.0.0/28"] } });
    const broken = structuredClone(policy!);
    (broken.spec.ingress[0]!.from[1] as { ipBlock: { cidr: string } }).ipBlock.cidr = "10.0.0.0/33";
    const r = await cp.request("POST", `${collection}?dryRun=All`, broken);
    expect(r.status).toBe(422);
    expect(r.body.message).toContain("spec.ingress[0].from[1].ipBlock.cidr");
  });
});
