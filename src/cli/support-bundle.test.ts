import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { runCaptured } from "../../test/support/cli/captured-io";
import { pathsFake } from "../../test/support/kube/paths-fake";
import { KubeApiError } from "../kube/errors";
import { PACKAGE_VERSION } from "../version";
import type { BundleApi } from "./bundle-collector";
import { REDACTED } from "./bundle-redaction";
import { run, userCluster, type SupportBundleDeps } from "./support-bundle";

// What must never be in a bundle: the kubeconfig's own (opaque) token, a service account JWT and a
// PEM private key, planted below in objects, env vars, annotations, events and logs.
const USER_TOKEN = "kubeconfig-user-token-8f3a9c2e71d4";
const JWT =
  "eyJhbGciOiJSUzI1NiIsImtpZCI6IngifQ.eyJpc3MiOiJrdWJlcm5ldGVzL3NlcnZpY2VhY2NvdW50In0.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
const PEM = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIOdeadbeefdeadbeef\n-----END EC PRIVATE KEY-----";
const NEEDLES = [
  USER_TOKEN,
  Buffer.from(USER_TOKEN).toString("base64"),
  JWT,
  "eyJhbGciOiJSUzI1NiIs",
  "PRIVATE KEY-----",
  "MHcCAQEEIOdeadbeef",
];

const NS = "lvm-system";
const meta = (name: string, extra: object = {}) => ({ name, namespace: NS, uid: `uid-${name}`, ...extra });
const list = (apiVersion: string, kind: string, items: object[]) => ({
  apiVersion,
  kind: `${kind}List`,
  items,
});
const pod = (name: string, labels: object, nodeName: string, containers: string[], restarts = 0) => ({
  metadata: meta(name, {
    labels,
    annotations: { "kubectl.kubernetes.io/last-applied-configuration": `{"token":"${USER_TOKEN}"}` },
  }),
  spec: {
    nodeName,
    containers: containers.map((c) => ({ name: c, env: [{ name: "AGENT_TOKEN", value: JWT }] })),
  },
  status: {
    phase: "Running",
    conditions: [{ type: "Ready", status: "True" }],
    containerStatuses: containers.map((c) => ({ name: c, ready: true, restartCount: restarts })),
  },
});
const AGENT = pod("agent-x7k2p", { "app.kubernetes.io/name": "pulumi-lvm-agent" }, "n1", ["agent"], 2);
const OPERATOR = pod("operator-5d9f", { "app.kubernetes.io/name": "pulumi-lvm-operator" }, "cp", [
  "operator",
]);
const TOPOLVM = pod("topolvm-node-abc", { "app.kubernetes.io/name": "topolvm" }, "n1", ["topolvm-node"]);
const LVM_NODE = {
  metadata: meta("n1", { annotations: { "example.com/debug": `Bearer ${USER_TOKEN}` } }),
  spec: { nodeName: "n1" },
  status: {
    state: "Ready",
    volumeGroups: [{ name: "vg-data", state: "Healthy", size: "30Gi", free: "2Gi" }],
    conditions: [{ type: "Applied", status: "False", reason: "Failed", message: `lvm said: ${PEM}` }],
  },
};
const forbidden = (path: string) =>
  new KubeApiError(
    "GET",
    path,
    403,
    "Forbidden",
    `csinodes is forbidden: User "u" cannot list resource "csinodes"`,
  );

const sel = (v: string) => `?labelSelector=${encodeURIComponent(`app.kubernetes.io/name=${v}`)}`;
const ROUTES: Record<string, unknown> = {
  "/version": { major: "1", minor: "31", gitVersion: "v1.31.2" },
  "/apis/lvm.topolvm.io/v2alpha1/lvmnodesets": list("lvm.topolvm.io/v2alpha1", "LVMNodeSet", [
    { metadata: meta("edge"), spec: {}, status: { state: "Ready" } },
  ]),
  "/apis/lvm.topolvm.io/v2alpha1/lvmnodes": list("lvm.topolvm.io/v2alpha1", "LVMNode", [LVM_NODE]),
  "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/lvmnodes.lvm.topolvm.io": {
    spec: {
      group: "lvm.topolvm.io",
      scope: "Namespaced",
      versions: [{ name: "v2alpha1", served: true, storage: true, schema: { huge: true } }],
    },
    status: { storedVersions: ["v2alpha1"] },
  },
  "/apis/storage.k8s.io/v1/storageclasses": list("storage.k8s.io/v1", "StorageClass", [
    {
      metadata: { name: "topolvm-thin" },
      provisioner: "topolvm.io",
      parameters: { "csi.storage.k8s.io/provisioner-secret-name": "x", password: "hunter22" },
    },
  ]),
  "/apis/storage.k8s.io/v1/csinodes": forbidden("/apis/storage.k8s.io/v1/csinodes"),
  "/apis/topolvm.io/v1/logicalvolumes": list("topolvm.io/v1", "LogicalVolume", [
    { metadata: { name: "pvc-1" }, spec: { nodeName: "n1" } },
  ]),
  [`/apis/apps/v1/deployments${sel("pulumi-lvm-operator")}`]: list("apps/v1", "Deployment", []),
  [`/api/v1/pods${sel("pulumi-lvm-operator")}`]: list("v1", "Pod", [OPERATOR]),
  [`/apis/apps/v1/daemonsets${sel("pulumi-lvm-agent")}`]: list("apps/v1", "DaemonSet", []),
  [`/api/v1/pods${sel("pulumi-lvm-agent")}`]: list("v1", "Pod", [AGENT]),
  [`/api/v1/pods${sel("topolvm")}`]: list("v1", "Pod", [TOPOLVM]),
  [`/api/v1/events?fieldSelector=${encodeURIComponent("involvedObject.kind=LVMNode")}`]: list("v1", "Event", [
    {
      metadata: meta("n1.1"),
      involvedObject: { apiVersion: "lvm.topolvm.io/v2alpha1", kind: "LVMNode", name: "n1" },
      message: `token ${JWT}`,
      lastTimestamp: "2026-01-02T00:00:00Z",
    },
    {
      metadata: meta("other.1"),
      involvedObject: { apiVersion: "example.com/v1", kind: "LVMNode", name: "n1" },
      message: "not ours",
    },
  ]),
  [`/api/v1/events?fieldSelector=${encodeURIComponent("involvedObject.kind=LVMNodeSet")}`]: list(
    "v1",
    "Event",
    [],
  ),
  "/api/v1/namespaces/lvm-system/events": list("v1", "Event", [
    {
      metadata: meta("operator.1"),
      involvedObject: { kind: "Pod", name: "operator-5d9f" },
      message: "Started",
      lastTimestamp: "2026-01-01T00:00:00Z",
    },
  ]),
};
const LOGS: Record<string, string> = {
  "/api/v1/namespaces/lvm-system/pods/agent-x7k2p/log": `2026-01-01T00:00:00Z {"msg":"apply","auth":"Bearer ${USER_TOKEN}"}\n2026-01-01T00:00:01Z key ${PEM}\n`,
  "/api/v1/namespaces/lvm-system/pods/operator-5d9f/log": `2026-01-01T00:00:00Z token=${JWT} raw ${USER_TOKEN}\n`,
  "/api/v1/namespaces/lvm-system/pods/topolvm-node-abc/log": "2026-01-01T00:00:00Z started\n",
};

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "support-bundle-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const NOW = new Date("2026-01-03T00:00:00Z");
function deps(api: BundleApi, writes: Map<string, Buffer>): SupportBundleDeps {
  return {
    cluster: async () => ({ api, server: "https://api.prod.example:6443/k8s/c-1", secrets: [USER_TOKEN] }),
    writeFile: async (path, data) => void writes.set(path, data),
    now: () => NOW,
  };
}

/** The bundle written, extracted with the system's tar: each file's path (below the bundle's folder) and text. */
function untar(data: Buffer): Map<string, string> {
  writeFileSync(join(dir, "b.tgz"), data);
  execFileSync("tar", ["-xzf", join(dir, "b.tgz"), "-C", dir]);
  const files = new Map<string, string>();
  const walk = (rel: string) => {
    for (const e of readdirSync(join(dir, "support-bundle", rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) walk(p);
      else files.set(p, readFileSync(join(dir, "support-bundle", p), "utf8"));
    }
  };
  walk("");
  return files;
}

test("the bundle: every part, through the pods' logs; no token, JWT or private key anywhere, the redaction markers instead", async () => {
  const api = pathsFake(ROUTES, LOGS);
  const writes = new Map<string, Buffer>();
  const r = await runCaptured((io) => run(io, deps(api, writes)), ["-o", "bundle.tgz"]);
  expect(r.code).toBe(0);
  expect(r.stdout).toMatch(/^wrote bundle.tgz: \d+ item\(s\) collected, \d+ not in this cluster, 1 failed/);
  expect(r.stderr).toContain("could not collect CSINodes: GET /apis/storage.k8s.io/v1/csinodes: HTTP 403");
  const files = untar(writes.get("bundle.tgz")!);
  expect([...files.keys()].sort()).toEqual([
    "agents/daemonsets.json",
    "agents/nodes.json",
    "agents/pods.json",
    "cluster/crds.json",
    "cluster/storageclasses.json",
    "cluster/version.json",
    "events.json",
    "logs/lvm-system/agent-x7k2p/agent.log",
    "logs/lvm-system/agent-x7k2p/agent.previous.log",
    "logs/lvm-system/operator-5d9f/operator.log",
    "logs/lvm-system/topolvm-node-abc/topolvm-node.log",
    "lvm/lvmnodes.json",
    "lvm/lvmnodesets.json",
    "manifest.json",
    "operator/deployments.json",
    "operator/pods.json",
    "topolvm/logicalvolumes.json",
    "topolvm/pods.json",
  ]);
  for (const [name, text] of files)
    for (const needle of NEEDLES) expect([name, text.includes(needle)]).toEqual([name, false]);
  const all = [...files.values()].join("\n");
  expect(all).not.toMatch(/-----BEGIN [A-Z ]*PRIVATE KEY-----/);
  expect(all).not.toMatch(/eyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/);
  expect(files.get("logs/lvm-system/agent-x7k2p/agent.log")).toContain(`Bearer ${REDACTED}`);
  expect(files.get("logs/lvm-system/agent-x7k2p/agent.log")).toContain(`${REDACTED} (private key)`);
  expect(files.get("logs/lvm-system/operator-5d9f/operator.log")).toBe(
    `2026-01-01T00:00:00Z token=${REDACTED} raw ${REDACTED}\n`,
  );
  const json = (file: string) => JSON.parse(files.get(file)!) as unknown;
  expect(json("agents/pods.json")).toMatchObject({
    items: [
      {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { annotations: { "kubectl.kubernetes.io/last-applied-configuration": REDACTED } },
        spec: { containers: [{ env: [{ name: "AGENT_TOKEN", value: REDACTED }] }] },
      },
    ],
  });
  expect(json("cluster/storageclasses.json")).toMatchObject({
    items: [{ parameters: { "csi.storage.k8s.io/provisioner-secret-name": "x", password: REDACTED } }],
  });
  expect(JSON.parse(files.get("lvm/lvmnodes.json")!).items[0].status.volumeGroups[0]).toMatchObject({
    name: "vg-data",
    free: "2Gi",
  });
  expect(JSON.parse(files.get("cluster/crds.json")!)).toEqual([
    {
      name: "lvmnodes.lvm.topolvm.io",
      group: "lvm.topolvm.io",
      scope: "Namespaced",
      versions: [{ name: "v2alpha1", served: true, storage: true }],
      storedVersions: ["v2alpha1"],
    },
  ]);
  const events = JSON.parse(files.get("events.json")!) as { items: Array<{ metadata: { name: string } }> };
  expect(events.items.map((e) => e.metadata.name)).toEqual(["operator.1", "n1.1"]);
  expect(JSON.parse(files.get("agents/nodes.json")!)).toEqual([
    expect.objectContaining({
      node: "n1",
      lvmNode: "lvm-system/n1",
      reported: expect.objectContaining({ state: "Ready" }),
      agentPods: [
        expect.objectContaining({ name: "lvm-system/agent-x7k2p", phase: "Running", ready: "True" }),
      ],
    }),
  ]);
  // Each log: its last lines and bytes only, with timestamps; the previous container's after a restart.
  expect(api.paths).toContain(
    "/api/v1/namespaces/lvm-system/pods/agent-x7k2p/log?container=agent&tailLines=1000&limitBytes=1048576&timestamps=true&previous=true",
  );
});

test("the manifest: when, the server's host name only, this version, what was collected, absent and failed, and what is never collected", async () => {
  const writes = new Map<string, Buffer>();
  const r = await runCaptured(
    (io) => run(io, deps(pathsFake(ROUTES, LOGS), writes)),
    ["-o", "b.tgz", "--tail", "50", "--log-bytes", "4096"],
  );
  expect(r.code).toBe(0);
  const manifest = JSON.parse(untar(writes.get("b.tgz")!).get("manifest.json")!);
  expect(manifest).toMatchObject({
    apiVersion: "pulumi-lvm.dev/support-bundle/v1",
    createdAt: "2026-01-03T00:00:00.000Z",
    pulumiLvmVersion: PACKAGE_VERSION,
    cluster: { server: "api.prod.example" },
    logs: { tailLines: 50, limitBytes: 4096 },
  });
  expect(manifest.collected).toContainEqual(
    expect.objectContaining({ what: "LVMNodes", file: "lvm/lvmnodes.json", count: 1 }),
  );
  expect(manifest.absent.map((a: { what: string }) => a.what)).toEqual(
    expect.arrayContaining([
      "VolumeSnapshotClasses",
      "CSIDriver topolvm.io",
      "CRD logicalvolumes.topolvm.io",
    ]),
  );
  expect(manifest.failed).toEqual([
    expect.objectContaining({
      what: "CSINodes",
      path: "/apis/storage.k8s.io/v1/csinodes",
      status: 403,
      error: expect.stringContaining("forbidden"),
    }),
  ]);
  expect(manifest.notCollected).toEqual([
    expect.objectContaining({
      what: expect.stringContaining("agents' own HTTP API"),
      why: expect.stringContaining("TokenRequest"),
    }),
  ]);
});

test("--namespace narrows the namespaced reads; TopoLVM's pods without the chart's label are found by name in the agents' namespace", async () => {
  const ns = (p: string) => p.replace(/^\/(api\/v1|apis\/[^/]+\/[^/]+)\//, (m) => `${m}namespaces/${NS}/`);
  const routes = Object.fromEntries(
    Object.entries(ROUTES).map(([p, v]) => [
      /\/(lvmnode|pods|deployments|daemonsets|events)/.test(p) && !p.includes("/namespaces/") ? ns(p) : p,
      v,
    ]),
  );
  routes[ns(`/api/v1/pods${sel("topolvm")}`)] = list("v1", "Pod", []);
  routes["/api/v1/namespaces/lvm-system/pods"] = list("v1", "Pod", [
    AGENT,
    TOPOLVM,
    { ...TOPOLVM, metadata: meta("unrelated") },
  ]);
  const api = pathsFake(routes, LOGS);
  const writes = new Map<string, Buffer>();
  expect(
    (await runCaptured((io) => run(io, deps(api, writes)), ["-o", "b.tgz", "--namespace", NS])).code,
  ).toBe(0);
  expect(
    api.paths
      .filter((p) => /\/(lvmnodes|lvmnodesets|pods|events|deployments|daemonsets)(\?|$)/.test(p))
      .filter((p) => !p.includes("/namespaces/lvm-system/")),
  ).toEqual([]);
  const topolvm = JSON.parse(untar(writes.get("b.tgz")!).get("topolvm/pods.json")!) as {
    items: Array<{ metadata: { name: string } }>;
  };
  expect(topolvm.items.map((p) => p.metadata.name)).toEqual(["topolvm-node-abc"]);
});

test("nothing readable: the bundle (its manifest says why) and exit 1; a file that cannot be written: exit 1; bad flags: exit 2", async () => {
  const down: BundleApi = {
    getPath: async (path) => {
      throw new KubeApiError("GET", path, 401, "Unauthorized", "Unauthorized");
    },
    getText: async () => "",
  };
  const writes = new Map<string, Buffer>();
  const r = await runCaptured((io) => run(io, deps(down, writes)), ["-o", "b.tgz"]);
  expect(r.code).toBe(1);
  expect(r.stderr).toContain("nothing could be read from the cluster");
  const manifest = JSON.parse(untar(writes.get("b.tgz")!).get("manifest.json")!);
  expect(manifest.collected).toEqual([]);
  expect(manifest.failed[0]).toMatchObject({ status: 401 });

  // No answer at all to the first request: nothing else is tried (each would wait as long).
  const asked: string[] = [];
  const silent: BundleApi = {
    getPath: async (path) => {
      asked.push(path);
      throw new KubeApiError("GET", path, 0, "", "cannot reach the API server at https://api:6443: timeout");
    },
    getText: async () => "",
  };
  expect((await runCaptured((io) => run(io, deps(silent, writes)), ["-o", "c.tgz"])).code).toBe(1);
  expect(asked).toEqual(["/version"]);
  expect(JSON.parse(untar(writes.get("c.tgz")!).get("manifest.json")!).notCollected).toEqual([
    { what: "everything else", why: expect.stringContaining("no answer to the first request") },
  ]);

  const unwritable: SupportBundleDeps = {
    ...deps(pathsFake(ROUTES, LOGS), writes),
    writeFile: async () => {
      throw new Error("EACCES: permission denied, open '/b.tgz'");
    },
  };
  expect(await runCaptured((io) => run(io, unwritable), ["-o", "/b.tgz"])).toMatchObject({
    code: 1,
    stderr: expect.stringContaining("cannot write /b.tgz: EACCES"),
  });
  for (const argv of [
    [],
    ["-o"],
    ["-o", "b.tgz", "--tail", "0"],
    ["-o", "b.tgz", "--log-bytes", "1k"],
    ["-o", "b.tgz", "x"],
  ])
    expect([argv, (await runCaptured((io) => run(io, deps(down, writes)), argv)).code]).toEqual([argv, 2]);
});

test("from a kubeconfig: its server, and its token among the credentials to redact (nothing is sent)", async () => {
  const file = join(dir, "kubeconfig");
  writeFileSync(
    file,
    `apiVersion: v1
kind: Config
current-context: c
contexts: [{ name: c, context: { cluster: k, user: u } }]
clusters: [{ name: k, cluster: { server: "https://10.0.0.1:6443", insecure-skip-tls-verify: true } }]
users: [{ name: u, user: { token: ${USER_TOKEN} } }]
`,
  );
  const cluster = await userCluster({ kubeconfig: file });
  expect(cluster).toMatchObject({ server: "https://10.0.0.1:6443", secrets: [USER_TOKEN] });
});
