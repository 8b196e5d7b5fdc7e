/**
 * pulumi-lvm as a component provider (PulumiPlugin.yaml), with the real engine: the CLI and its
 * Node.js and Python language hosts of the same release (test/pulumi/install.sh), the package as
 * `npm pack` publishes it (installed into the Python project's node_modules, as `npm install
 * pulumi-lvm` would), a Python program using the SDK that `pulumi package add` generates, in a
 * virtualenv with pulumi==<CLI version> from the wheels install.sh downloaded. The TypeScript
 * components run in the provider's process (the Node.js host's RunPlugin), and NodeSetDisks in the
 * engine's dynamic-provider plugin, started in the Python program's directory, against a real agent
 * on loop devices. Outcomes on disk are checked with the test's own `vgs`/`pvs`.
 *
 * See docs/languages.md. Missing binaries, wheels or a stale dist/ fail the run; nothing skips.
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
import { pulumiBinDir, PulumiWorkspace, requirePulumiBinaries, type StateResource } from "./cli";
import { installPackedPackage, pythonWheelsDir, requireFreshBuild } from "./component-package";
import { FIXTURE_NAME, writeDisksFixture } from "./disks-fixture";

jest.setTimeout(900_000);

const REPO = path.resolve(__dirname, "..", "..");
const PROGRAM = path.join(__dirname, "python-program");
const NODE = "node-py";
const VG = `ppy-${randomBytes(3).toString("hex")}`;
const STACK = "py";
/** Where the backing files of our loop devices go (volume groups ppy-*). */
const ROOT = "/var/tmp/pulumi-python-tests";
// Topolvm is inferred too (its node sets are TypeScript-only options; other languages get its clear error).
const COMPONENTS = ["LvmSystem", "NodeSet", "VolumeGroup", "DeviceClass", "Topolvm"];
const DISKS_TYPE = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";

let scratch: Scratch | undefined;
let agent: AgentProcess | undefined;
let ws: PulumiWorkspace | undefined;
let token: string;
let L1: string, L2: string, L3: string;
let devices: string[];
const timings: Record<string, number> = {};

function timed<T>(name: string, f: () => T): T {
  const t0 = Date.now();
  try {
    return f();
  } finally {
    timings[name] = (Date.now() - t0) / 1000;
  }
}

beforeAll(async () => {
  requirePulumiBinaries();
  requireHostTier();
  requireFreshBuild(REPO);
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

  ws = new PulumiWorkspace(STACK, randomBytes(12).toString("hex"), {
    root: ROOT,
    projectFile: path.join(PROGRAM, "Pulumi.yaml"),
    copyProgram: true,
    // pip (the venv, `pulumi package add` installing the generated SDK) never reaches an index.
    env: { PIP_NO_INDEX: "1", PIP_FIND_LINKS: wheels, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
  });
  timed("npm pack + install into node_modules", () => installPackedPackage(REPO, ws!.project));
  timed("virtualenv (pulumi from wheels)", () => {
    execFileSync("python3", ["-m", "venv", path.join(ws!.project, "venv")], { stdio: "inherit" });
    execFileSync(
      path.join(ws!.project, "venv", "bin", "pip"),
      [
        "install",
        "--quiet",
        "--no-index",
        "--find-links",
        wheels,
        "-r",
        path.join(ws!.project, "requirements.txt"),
      ],
      { stdio: "inherit" },
    );
  });
  writeDisksFixture(path.join(ws.project, "disks-fixture"));
  ws.init();
  ws.ok(["config", "set", "node", NODE]);
  ws.ok(["config", "set", "agentUrl", agent.url]);
  ws.ok(["config", "set", "--secret", "agentToken"], { input: token });
  ws.ok(["config", "set", "volumeGroup", VG]);
  devices.forEach((dev, i) => ws!.ok(["config", "set", "--path", `devices[${i}]`, dev]));
}, 900_000);

afterAll(async () => {
  await agent?.stop();
  scratch?.cleanup();
  ws?.cleanup();
  console.log(
    `component provider (Python), seconds: ${Object.entries(timings)
      .map(([k, v]) => `${k} ${v.toFixed(1)}`)
      .join("; ")}`,
  );
});

const writesSince = (n: number) => commandLog(scratch!.path("commands.jsonl")).slice(n).filter(isWrite);
const logLength = () => commandLog(scratch!.path("commands.jsonl")).length;
const disks = () => ({ vgs: vgs(devices), members: membersOf(devices, VG) });
const resources = (): StateResource[] => ws!.exportState().deployment.resources ?? [];

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

// First, before `pulumi package add` installs pulumi-lvm's own dependencies inside its directory:
// the fixture then shares one @pulumi/pulumi with it, as one npm install would give.
describe("NodeSetDisks registered from a component provider's process, from Python (the SandboxDisks fixture)", () => {
  beforeAll(() => {
    ws!.ok(["package", "add", "./disks-fixture"], { timeoutMs: 900_000 });
    ws!.ok(["config", "set", "fixture", "true"]);
  });

  it("preview shows the node's plan; nothing is written", () => {
    const before = logLength();
    const { output } = timed("preview (Python, SandboxDisks)", () => ws!.ok(["preview", "--diff"]));
    expect(output).toContain(`+ ${DISKS_TYPE}: (create)`);
    expect(output).toContain(`${NODE}: {`);
    expect(output).toContain(`${L1} → ${VG} (new volume group)`);
    expect(output).toContain(`${L2} → ${VG} (new volume group)`);
    expect(output).toMatch(new RegExp(`${L3}: .*ext4`));
    expect(writesSince(before)).toEqual([]);
    expect(vgs(devices)).toEqual([]);
  });

  it("up builds the volume group on the claimed devices; the token is stored only encrypted", () => {
    timed("up (Python, SandboxDisks)", () => ws!.ok(["up", "--yes"]));
    expect(vgs(devices)).toEqual([
      expect.objectContaining({ vg_name: VG, pv_count: "2", vg_tags: "pulumi-lvm" }),
    ]);
    expect(membersOf(devices, VG)).toEqual([L1, L2].sort());
    const state = resources();
    // The dynamic resource is the component's child: registered from the provider's process.
    const disksRes = state.find((r) => r.type === DISKS_TYPE);
    expect(disksRes?.urn).toContain(`${FIXTURE_NAME}:index:SandboxDisks$${DISKS_TYPE}::e2e-disks`);
    expect((disksRes!.outputs!.nodes as Record<string, { stepsDone: number }>)[NODE]).toMatchObject({
      stepsDone: 6,
    });
    expect(ws!.exportState().text).not.toContain(token);
  });

  it("destroy with deletionPolicy Retain leaves the volume group on disk and writes nothing", () => {
    const before = { log: logLength(), disks: disks() };
    ws!.ok(["destroy", "--yes"]);
    expect(resources().filter((r) => r.type === DISKS_TYPE)).toEqual([]);
    expect(writesSince(before.log)).toEqual([]);
    expect(disks()).toEqual(before.disks);
  });
});

describe("pulumi package get-schema", () => {
  let schema: Schema;
  beforeAll(() => {
    // The first run installs the plugin's dependencies in its directory (npm install, the prepare
    // script's build); the second is the schema inference alone, plus starting the plugin.
    timed("get-schema, first run", () =>
      ws!.ok(["package", "get-schema", "./node_modules/pulumi-lvm"], { timeoutMs: 900_000 }),
    );
    const out = timed("get-schema", () =>
      ws!.ok(["package", "get-schema", "./node_modules/pulumi-lvm"], { timeoutMs: 900_000 }),
    ).stdout;
    schema = JSON.parse(out) as Schema;
  });

  it("has exactly the five components, as components", () => {
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
    const nodeSet = schema.resources["pulumi-lvm:index:NodeSet"]!;
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
    const nodeSet = schema.resources["pulumi-lvm:index:NodeSet"]!;
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
    timed("package add (Python SDK)", () =>
      ws!.ok(["package", "add", "./node_modules/pulumi-lvm"], { timeoutMs: 900_000 }),
    );
    const project = YAML.parse(fs.readFileSync(path.join(ws!.project, "Pulumi.yaml"), "utf8")) as {
      packages?: Record<string, unknown>;
    };
    expect(Object.keys(project.packages ?? {})).toEqual(["pulumi-lvm"]);
    const inputs = fs.readFileSync(
      path.join(ws!.project, "sdks", "pulumi-lvm", "pulumi_lvm", "_inputs.py"),
      "utf8",
    );
    expect(inputs).toMatch(/^class NodeSetTemplateArgs:/m);
    expect(inputs).toMatch(/^class VolumeGroupSpecArgs:/m);
    expect(inputs.match(/\w*ArgsArgs\w*/g) ?? []).toEqual([]);
    const printed = execFileSync(
      path.join(ws!.project, "venv", "bin", "python"),
      [
        "-c",
        "import pulumi_lvm, inspect; print(sorted(n for n, c in inspect.getmembers(pulumi_lvm, inspect.isclass) if issubclass(c, pulumi_lvm.pulumi.ComponentResource)))",
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

describe("a NodeSet in sandbox mode from Python, as far as the Kubernetes provider allows", () => {
  beforeAll(() => ws!.ok(["config", "set", "fixture", "false"]));

  it("the provider runs the NodeSet; the engine stops at its first Kubernetes child, for want of the plugin", () => {
    const r = timed("preview (Python, NodeSet)", () => ws!.run(["preview", "--json"]));
    expect(r.code).not.toBe(0);
    const preview = JSON.parse(r.stdout) as {
      steps?: Array<{ urn: string }>;
      diagnostics?: Array<{ urn?: string; message: string; severity: string }>;
    };
    const urns = (preview.steps ?? []).map((s) => s.urn);
    expect(urns).toEqual(expect.arrayContaining([expect.stringMatching(/pulumi-lvm:index:NodeSet::e2e$/)]));
    const errors = (preview.diagnostics ?? []).filter((d) => d.severity === "error");
    expect(errors.map((e) => e.message).join("\n")).toMatch(
      /no resource plugin 'pulumi-resource-kubernetes' found/,
    );
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
