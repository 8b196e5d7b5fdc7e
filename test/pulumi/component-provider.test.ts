/**
 * pulumi-lvm as a component provider (PulumiPlugin.yaml), with the real engine: the CLI and its
 * Node.js and Python language hosts of the same release (test/pulumi/install.sh), the real
 * Kubernetes provider plugin (pulumi-resource-kubernetes 4.32.0, test/pulumi/install-kubernetes.sh)
 * against a real kube-apiserver (test/env), the package as `npm pack` publishes it (installed into
 * the Python project's node_modules, as `npm install pulumi-lvm` would), and a Python program using
 * the SDK that `pulumi package add` generates, in a virtualenv with pulumi==<CLI version> from the
 * wheels install.sh downloaded. The TypeScript components run in the provider's process (the Node.js
 * host's RunPlugin); the NodeSet's NodeSetDisks in the engine's dynamic-provider plugin, started in
 * the Python program's directory, against a real agent on loop devices. Outcomes are checked with
 * the test's own `vgs`/`pvs` and API reads.
 *
 * Nothing is downloaded: the Kubernetes plugin is linked into the workspace's PULUMI_HOME, where
 * `package get-schema`/`add` (which install a plugin's required plugins themselves) and the engine
 * find it. There is no kubelet: the LvmSystem is previewed (its workloads could never roll out),
 * the NodeSet is applied. See docs/languages.md. Missing binaries, wheels or a stale dist/ fail the
 * run; nothing skips.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import {
  commandLog,
  isWrite,
  membersOf,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";
import { startControlPlane, type ControlPlane, type Json } from "../env/cluster";
import { pulumiBinDir, PulumiWorkspace, requirePulumiBinaries, type StateResource } from "./cli";
import { requireCommandPlugin } from "./command-plugin";
import {
  createVirtualenv,
  inferSchema,
  installPackedPackage,
  offlinePip,
  pythonWheelsDir,
  requireFreshBuild,
} from "./component-package";
import { requireKubernetesPlugin } from "./kubernetes-plugin";
import { Timings } from "../timings";

jest.setTimeout(900_000);

const REPO = path.resolve(__dirname, "..", "..");
const PROGRAM = path.join(__dirname, "python-program");
const NODE = "node-py";
const VG = `ppy-${randomBytes(3).toString("hex")}`;
const STACK = "py";
const NAMESPACE = "lvm-system";
/** Where the backing files of our loop devices go (volume groups ppy-*). */
const ROOT = "/var/tmp/pulumi-python-tests";
// Every ComponentResource the package exports is inferred: Topolvm too (its node sets are
// TypeScript-only options; other languages get its clear error), and AgentHost (bare hosts).
const COMPONENTS = [
  "LvmSystem",
  "NodeSet",
  "VolumeGroup",
  "DeviceClass",
  "Topolvm",
  "AgentHost",
  "HostInventory",
];
/** The Python module `pulumi package add` generates for the npm package "pulumi-lvm" (pulumi_ + name). */
const SDK_MODULE = "pulumi_pulumi_lvm";
const DISKS_TYPE = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";
const NODE_SET_TYPE = "pulumi-lvm:index:NodeSet";
const NODE_SET_PATH = `/apis/lvm.topolvm.io/v2alpha1/namespaces/${NAMESPACE}/lvmnodesets/e2e`;
/** `package add` and `get-schema` run `npm install` in the plugin's directory: minutes under load. */
const LONG = { timeoutMs: 900_000 };

let scratch: Scratch | undefined;
let agent: AgentProcess | undefined;
let cp: ControlPlane | undefined;
let ws: PulumiWorkspace | undefined;
let token: string;
let L1: string, L2: string, L3: string;
let devices: string[];
const timings = new Timings();
const timed = <T>(name: string, f: () => T): T => timings.timed(name, f);

beforeAll(async () => {
  requirePulumiBinaries();
  requireHostTier();
  requireFreshBuild(REPO);
  const kubernetesPlugin = requireKubernetesPlugin();
  // The package's peer dependency for AgentHost: `package get-schema`/`add` install it as they do
  // the Kubernetes plugin.
  const commandPlugin = requireCommandPlugin();
  const wheels = pythonWheelsDir(pulumiBinDir());
  scratch = new Scratch("python", ROOT);
  [L1, L2, L3] = [scratch.loop(), scratch.loop(), scratch.loop()];
  devices = [L1, L2, L3];
  execFileSync("mkfs.ext4", ["-q", "-F", L3], { stdio: "ignore" });
  token = writeTokenFile(scratch.path("tokens"), { op: { user: "pulumi", node: NODE } }).op!;
  agent = await startAgent({
    node: NODE,
    devices,
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
  });
  // The garbage collector finishes the foreground deletions the Kubernetes provider asks for on destroy.
  cp = await startControlPlane({ controllerManager: true });

  ws = new PulumiWorkspace(STACK, randomBytes(12).toString("hex"), {
    root: ROOT,
    projectFile: path.join(PROGRAM, "Pulumi.yaml"),
    copyProgram: true,
    // pulumi-lvm requires the kubernetes plugin at its @pulumi/kubernetes version: `package
    // get-schema`/`add` install a plugin's required plugins themselves (automatic acquisition off or
    // not), and the engine needs it for the components' children. Here it is, nothing downloads.
    plugins: [kubernetesPlugin, commandPlugin],
    // pip (the venv, `pulumi package add` installing the generated SDK) never reaches an index.
    env: offlinePip(wheels),
  });
  timed("npm pack + install into node_modules", () => installPackedPackage(REPO, ws!.project));
  timed("virtualenv (pulumi from wheels)", () => createVirtualenv(ws!.project, wheels));
  ws.init();
  ws.ok(["config", "set", "node", NODE]);
  ws.ok(["config", "set", "agentUrl", agent.url]);
  ws.ok(["config", "set", "--secret", "agentToken"], { input: token });
  ws.ok(["config", "set", "volumeGroup", VG]);
  devices.forEach((dev, i) => ws!.ok(["config", "set", "--path", `devices[${i}]`, dev]));
  // The default Kubernetes provider's cluster, from stdin (the admin's bearer token is on no command line).
  ws.ok(["config", "set", "--secret", "kubernetes:kubeconfig"], {
    input: fs.readFileSync(cp.kubeconfigPath, "utf8"),
  });
}, 900_000);

afterAll(async () => {
  await agent?.stop();
  await cp?.stop();
  scratch?.cleanup();
  ws?.cleanup();
  console.log(timings.table("component provider (Python), seconds"));
});

const writesSince = (n: number) => commandLog(scratch!.path("commands.jsonl")).slice(n).filter(isWrite);
const logLength = () => commandLog(scratch!.path("commands.jsonl")).length;
const disks = () => ({ vgs: vgs(devices), members: membersOf(devices, VG) });
const resources = (): StateResource[] => ws!.exportState().deployment.resources ?? [];

/**
 * The test's own API requests, each on a new connection: the pulumi commands run with spawnSync,
 * which blocks the event loop while the apiserver closes idle pooled sockets (a reused one failed
 * with EPIPE). apiGet: an object's body, or undefined when it does not exist.
 */
const api = (method: string, urlPath: string, body?: unknown) =>
  cp!.request(method, urlPath, body, undefined, { newConnection: true });
async function apiGet(urlPath: string): Promise<Json | undefined> {
  const r = await api("GET", urlPath);
  if (r.status === 404) return undefined;
  if (r.status !== 200) throw new Error(`GET ${urlPath}: HTTP ${r.status}`);
  return r.body;
}

interface Schema {
  name: string;
  resources: Record<
    string,
    {
      isComponent?: boolean;
      description?: string;
      inputProperties: Record<string, Prop>;
      requiredInputs?: string[];
      properties: Record<string, Prop>;
    }
  >;
  types: Record<string, { description?: string; properties: Record<string, Prop>; required?: string[] }>;
}
interface Prop {
  type?: string;
  $ref?: string;
  description?: string;
  items?: Prop;
  additionalProperties?: Prop;
}

/** A schema's resources and types: each one's description, property names, types and descriptions, required ones. */
function schemaShape(s: Schema) {
  const props = (ps: Record<string, Prop> | undefined) =>
    Object.fromEntries(
      Object.entries(ps ?? {}).map(([k, p]) => [
        k,
        [p.type, p.$ref, p.items?.type ?? p.items?.$ref, p.additionalProperties?.$ref, p.description],
      ]),
    );
  return {
    resources: Object.fromEntries(
      Object.entries(s.resources).map(([k, r]) => [
        k,
        [r.description, props(r.inputProperties), [...(r.requiredInputs ?? [])].sort(), props(r.properties)],
      ]),
    ),
    types: Object.fromEntries(
      Object.entries(s.types).map(([k, t]) => [
        k,
        [t.description, props(t.properties), [...(t.required ?? [])].sort()],
      ]),
    ),
  };
}

describe("pulumi package get-schema", () => {
  let schema: Schema;
  beforeAll(() => {
    // The first run installs the plugin's dependencies in its directory (npm install; the prepare
    // script does not compile: dist/ ships); the second is the schema inference alone, plus
    // starting the plugin.
    timed("get-schema, first run (npm install in the plugin directory)", () =>
      ws!.ok(["package", "get-schema", "./node_modules/pulumi-lvm"], LONG),
    );
    const out = timed("get-schema (schema generation)", () =>
      ws!.ok(["package", "get-schema", "./node_modules/pulumi-lvm"], LONG),
    ).stdout;
    schema = JSON.parse(out) as Schema;
  });

  it("is the schema the provider computes in process (python-sdk.test.ts, npm test)", async () => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the package's exports, as the plugin runner requires them
    const inProcess = JSON.parse(await inferSchema(REPO, require("../../src"))) as Schema;
    // The CLI prints the schema as its Go PackageSpec re-encodes it (no `optional` or empty
    // `dependencies`, an empty `config`): the same resources, types, properties and descriptions.
    expect(schemaShape(schema)).toEqual(schemaShape(inProcess));
  });

  it("has exactly the seven components, as components", () => {
    expect(schema.name).toBe("pulumi-lvm");
    expect(Object.keys(schema.resources).sort()).toEqual(
      COMPONENTS.map((c) => `pulumi-lvm:index:${c}`).sort(),
    );
    for (const r of Object.values(schema.resources)) expect(r.isComponent).toBe(true);
  });

  it("names its types without an Args suffix (other languages add their own) and refers to them from the args", () => {
    const types = Object.keys(schema.types).map((t) => t.replace("pulumi-lvm:index:", ""));
    expect(types.filter((t) => t.endsWith("Args"))).toEqual([]);
    expect(types).toEqual(
      expect.arrayContaining([
        "NodeSetTemplate",
        "VolumeGroupSpec",
        "DeviceClassSpec",
        "ThinPoolSpec",
        "AgentEndpoint",
        "ClusterMode",
        "TopolvmSettings",
        "NodeResult",
      ]),
    );
    const nodeSet = schema.resources[NODE_SET_TYPE]!;
    expect(nodeSet.inputProperties.template!.$ref).toBe("#/types/pulumi-lvm:index:NodeSetTemplate");
    expect(nodeSet.requiredInputs).toEqual(["template"]);
    expect(nodeSet.inputProperties.agents!.additionalProperties!.$ref).toBe(
      "#/types/pulumi-lvm:index:AgentEndpoint",
    );
    expect(Object.keys(nodeSet.properties).sort()).toEqual(
      ["namespace", "nodeSetName", "nodes", "snapshotClassNames", "storageClassNames"].sort(),
    );
    const template = schema.types["pulumi-lvm:index:NodeSetTemplate"]!;
    expect(template.properties.volumeGroups!.items!.$ref).toBe("#/types/pulumi-lvm:index:VolumeGroupSpec");
    expect(template.required).toEqual(["volumeGroups"]);
  });

  it("carries the doc comments over as descriptions", () => {
    const nodeSet = schema.resources[NODE_SET_TYPE]!;
    expect(nodeSet.description).toMatch(/^An LVMNodeSet: volume groups and TopoLVM device classes/);
    expect(nodeSet.inputProperties.agents!.description).toMatch(/^Sandbox mode: node name → its agent/);
    expect(schema.types["pulumi-lvm:index:AgentEndpoint"]!.properties.token!.description).toMatch(
      /stored in state only as a secret/,
    );
    expect(
      schema.resources["pulumi-lvm:index:LvmSystem"]!.inputProperties.agentImage!.description,
    ).toBeTruthy();
    expect(JSON.stringify(schema)).not.toContain("[object Object]");
  });
});

describe("pulumi package add (Python)", () => {
  it("generates a Python SDK with the clean names and installs it into the program's virtualenv", () => {
    timed("package add (SDK generation)", () =>
      ws!.ok(["package", "add", "./node_modules/pulumi-lvm"], LONG),
    );
    const project = YAML.parse(fs.readFileSync(path.join(ws!.project, "Pulumi.yaml"), "utf8")) as {
      packages?: Record<string, unknown>;
    };
    expect(Object.keys(project.packages ?? {})).toEqual(["pulumi-lvm"]);
    const inputs = fs.readFileSync(
      path.join(ws!.project, "sdks", "pulumi-lvm", SDK_MODULE, "_inputs.py"),
      "utf8",
    );
    expect(inputs).toMatch(/^class NodeSetTemplateArgs:/m);
    expect(inputs).toMatch(/^class VolumeGroupSpecArgs:/m);
    expect(inputs.match(/\w*ArgsArgs\w*/g) ?? []).toEqual([]);
    const printed = execFileSync(
      path.join(ws!.project, "venv", "bin", "python"),
      [
        "-c",
        `import inspect, pulumi, ${SDK_MODULE} as lvm; print(sorted(n for n, c in inspect.getmembers(lvm, inspect.isclass) if issubclass(c, pulumi.ComponentResource)))`,
      ],
      { encoding: "utf8" },
    );
    expect(printed.trim()).toBe(
      `[${[...COMPONENTS]
        .sort()
        .map((c) => `'${c}'`)
        .join(", ")}]`,
    );
  });
});

describe("an LvmSystem and a NodeSet from Python: preview", () => {
  beforeAll(() => ws!.ok(["config", "set", "lvmSystem", "true"]));
  afterAll(() => ws!.ok(["config", "set", "lvmSystem", "false"]));

  it("previews the LvmSystem's Kubernetes objects and the NodeSet's node plan; creates and writes nothing", async () => {
    const before = logLength();
    const r = timed("preview (Python, LvmSystem + NodeSet)", () => ws!.ok(["preview", "--json"], LONG));
    const preview = JSON.parse(r.stdout) as { steps?: Array<{ op: string; urn: string }> };
    // The URN's type is the parent types and the resource's own, joined by "$": keep the own one.
    const created = (preview.steps ?? [])
      .filter((s) => s.op === "create")
      .map((s) => s.urn.split("::")[2]!.split("$").pop());
    expect(created).toEqual(
      expect.arrayContaining([
        "pulumi-lvm:index:LvmSystem",
        "kubernetes:core/v1:Namespace",
        "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch",
        "kubernetes:apps/v1:DaemonSet",
        "kubernetes:apps/v1:Deployment",
        NODE_SET_TYPE,
        "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet",
        "kubernetes:storage.k8s.io/v1:StorageClass",
        DISKS_TYPE,
      ]),
    );
    expect(writesSince(before)).toEqual([]);
    expect(vgs(devices)).toEqual([]);
    expect(await apiGet(`/api/v1/namespaces/${NAMESPACE}`)).toBeUndefined();
  });
});

describe("a NodeSet in sandbox mode from Python, against a real agent and a real API server", () => {
  beforeAll(async () => {
    // What the LvmSystem installs (it cannot be applied here: no kubelet runs its workloads): the
    // namespace and the lvm.topolvm.io CRDs, created by the test itself.
    const ns = await api("POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: NAMESPACE },
    });
    expect(ns.status).toBe(201);
    for (const file of ["lvm.topolvm.io_lvmnodesets.yaml", "lvm.topolvm.io_lvmnodes.yaml"]) {
      const crd = YAML.parse(fs.readFileSync(path.join(REPO, "deploy", "crds", file), "utf8")) as Json;
      const r = await api("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", crd);
      expect(r.status).toBe(201);
    }
    for (let i = 0; ; i++) {
      const crd = await apiGet(
        "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/lvmnodesets.lvm.topolvm.io",
      );
      const established = (crd?.status?.conditions ?? []).some(
        (c: Json) => c.type === "Established" && c.status === "True",
      );
      if (established) break;
      if (i > 100) throw new Error("the LVMNodeSet CRD did not become Established in 30 s");
      await new Promise((res) => setTimeout(res, 300));
    }
  });

  it("preview shows the node's plan; nothing is written", async () => {
    const before = logLength();
    const { output } = timed("preview (Python, NodeSet)", () => ws!.ok(["preview", "--diff"], LONG));
    expect(output).toContain(`+ ${DISKS_TYPE}: (create)`);
    expect(output).toContain(`${NODE}: {`);
    expect(output).toContain(`${L1} → ${VG} (new volume group)`);
    expect(output).toContain(`${L2} → ${VG} (new volume group)`);
    expect(output).toMatch(new RegExp(`${L3}: .*ext4`));
    expect(writesSince(before)).toEqual([]);
    expect(vgs(devices)).toEqual([]);
    expect(await apiGet(NODE_SET_PATH)).toBeUndefined();
  });

  it("up builds the volume group and creates the LVMNodeSet and its StorageClass; the token is stored only encrypted", async () => {
    timed("up (Python, NodeSet)", () => ws!.ok(["up", "--yes"], LONG));
    expect(vgs(devices)).toEqual([
      expect.objectContaining({ vg_name: VG, pv_count: "2", vg_tags: "pulumi-lvm" }),
    ]);
    expect(membersOf(devices, VG)).toEqual([L1, L2].sort());
    const state = resources();
    // NodeSetDisks is the NodeSet's child: registered from the component provider's process.
    const disksRes = state.find((r) => r.type === DISKS_TYPE);
    expect(disksRes?.urn).toContain(`${NODE_SET_TYPE}$${DISKS_TYPE}::e2e-disks`);
    expect((disksRes!.outputs!.nodes as Record<string, { stepsDone: number }>)[NODE]).toMatchObject({
      stepsDone: 6,
    });
    expect(ws!.exportState().text).not.toContain(token);
    const nodeSet = await apiGet(NODE_SET_PATH);
    expect(nodeSet?.spec?.template?.volumeGroups?.map((v: Json) => v.name)).toEqual([VG]);
    const classes = JSON.parse(ws!.ok(["stack", "output", "storageClasses", "--json"]).stdout) as Record<
      string,
      string
    >;
    expect(Object.keys(classes)).toEqual([`${VG}-thick`]);
    const sc = await apiGet(`/apis/storage.k8s.io/v1/storageclasses/${classes[`${VG}-thick`]}`);
    expect(sc).toMatchObject({
      provisioner: "topolvm.io",
      parameters: { "topolvm.io/device-class": `${VG}-thick` },
    });
  });

  it("destroy with deletionPolicy Retain leaves the volume group on disk and writes nothing", async () => {
    const before = { log: logLength(), disks: disks() };
    timed("destroy (Python, NodeSet)", () => ws!.ok(["destroy", "--yes"], LONG));
    expect(resources().filter((r) => r.type === DISKS_TYPE)).toEqual([]);
    expect(writesSince(before.log)).toEqual([]);
    expect(disks()).toEqual(before.disks);
    expect(await apiGet(NODE_SET_PATH)).toBeUndefined();
  });

  it("bad input is refused by the component, naming the field, before anything registers", () => {
    ws!.ok(["config", "set", "agentUrl", "ftp://example.invalid"]);
    try {
      const r = ws!.run(["preview"]);
      expect(r.code).not.toBe(0);
      expect(r.output).toMatch(/args\.agents\.node-py\.url.*must be an http:\/\/ or https:\/\/ URL/s);
    } finally {
      ws!.ok(["config", "set", "agentUrl", agent!.url]);
    }
  });
});

/** The files under `dir` whose bytes contain `text`. */
function filesContaining(dir: string, text: string): string[] {
  return fs
    .readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => path.join(e.parentPath, e.name))
    .filter((file) => fs.readFileSync(file).includes(text));
}

describe("a secret arg in clear from Python: refused by the component provider, never in the state", () => {
  afterAll(() => {
    ws!.ok(["config", "rm", "clearTextFile"]);
    ws!.ok(["config", "rm", "clearTextAs"]);
  });

  // The program reads the token from a file (not from config: a plain config value is in the state
  // anyway, in the default provider's), then passes the text itself or a non-secret Output of it.
  it.each([
    ["a plain str", "plain"],
    ["a non-secret Output", "output"],
  ])(
    "%s as agents.<node>.token: up fails naming the field and how to pass a secret; nothing registered or written",
    (_what, kind) => {
      const value = `plain-${kind}-${randomBytes(12).toString("hex")}`;
      const file = scratch!.path(`clear-${kind}`);
      fs.writeFileSync(file, value);
      ws!.ok(["config", "set", "clearTextFile", file]);
      ws!.ok(["config", "set", "clearTextAs", kind]);
      const before = logLength();
      const r = timed(`up refused (Python, ${kind} token)`, () => ws!.run(["up", "--yes"], LONG));
      expect(r.code).not.toBe(0);
      expect(r.output).toContain(`args.agents.${NODE}.token: is not a secret`);
      expect(r.output).toMatch(
        /Python `pulumi\.Output\.secret\(\.\.\.\)`.*YAML `fn::secret`.*TypeScript `pulumi\.secret\(\.\.\.\)`/s,
      );
      expect(r.output).not.toContain(value);
      expect(resources().filter((s) => s.type === NODE_SET_TYPE || s.type === DISKS_TYPE)).toEqual([]);
      expect(writesSince(before)).toEqual([]);
      // The state (with its backups and history) and the stack's config.
      expect(filesContaining(ws!.backend, value)).toEqual([]);
      const stackConfig = fs.readdirSync(ws!.project).filter((f) => f.endsWith(".yaml"));
      expect(stackConfig.filter((f) => fs.readFileSync(path.join(ws!.project, f)).includes(value))).toEqual(
        [],
      );
    },
  );
});
