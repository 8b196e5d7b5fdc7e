/**
 * The typed Python SDK of the component provider, without the engine and without the Kubernetes
 * plugin, so that it runs in `npm test` (docs/languages.md, "Tested"): the schema the provider
 * serves, computed in this process by @pulumi/pulumi's own ComponentProvider (inferSchema); the
 * Python SDK generated from it by the real CLI and Python language host of this tier
 * (`pulumi package gen-sdk`, the code generator behind `pulumi package add`); installed into a fresh
 * virtualenv with pulumi==<CLI version> from the wheels test/pulumi/install.sh keeps (offline). Then
 * examples/python-quickstart and the Python programs of component-provider.test.ts and
 * python-lvm-system.test.ts are checked against that SDK: every class they name exists, every call
 * binds to its parameters, every output they read is one (check_sdk_calls.py). Running them needs
 * the engine and the Kubernetes plugin: those two tests (`npm run test:kubernetes`).
 */
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { pulumiBinDir, pulumiVersion, PulumiWorkspace, requirePulumiBinaries } from "./cli";
import { inferSchema, pythonWheelsDir } from "./component-package";
import { Timings } from "../timings";

jest.setTimeout(300_000);

const REPO = path.resolve(__dirname, "..", "..");
const ROOT = "/var/tmp/pulumi-e2e-tests";
const COMPONENTS = [
  "AgentHost",
  "DeviceClass",
  "HostInventory",
  "LvmSystem",
  "NodeSet",
  "Topolvm",
  "VolumeGroup",
];
const SDK_MODULE = "pulumi_pulumi_lvm";
const CHECKER = path.join(__dirname, "check_sdk_calls.py");
const PROGRAMS = [
  path.join(REPO, "examples", "python-quickstart", "__main__.py"),
  path.join(__dirname, "python-program", "__main__.py"),
  path.join(__dirname, "python-program-system", "__main__.py"),
];

let ws: PulumiWorkspace | undefined;
let schema: { resources: Record<string, { isComponent?: boolean }>; types: Record<string, unknown> };
let python: string;
const timings = new Timings();
const timed = <T>(name: string, f: () => T): T => timings.timed(name, f);

beforeAll(async () => {
  requirePulumiBinaries();
  const wheels = pythonWheelsDir(pulumiBinDir());
  const t0 = Date.now();
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- the package's exports, as the plugin runner requires them
  const text = await inferSchema(REPO, require("../../src"));
  timings.add("schema (in process)", Date.now() - t0);
  schema = JSON.parse(text) as typeof schema;
  ws = new PulumiWorkspace("sdk", randomBytes(12).toString("hex"), {
    root: ROOT,
    projectFile: path.join(__dirname, "python-program", "Pulumi.yaml"),
    copyProgram: true,
    env: { PIP_NO_INDEX: "1", PIP_FIND_LINKS: wheels, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
  });
  const schemaFile = path.join(ws.dir, "schema.json");
  fs.writeFileSync(schemaFile, text);
  timed("gen-sdk (Python)", () =>
    ws!.ok(["package", "gen-sdk", schemaFile, "--language", "python", "--out", path.join(ws!.dir, "sdk")]),
  );
  const venv = path.join(ws.dir, "venv");
  python = path.join(venv, "bin", "python");
  timed("virtualenv + SDK install (offline)", () => {
    execFileSync("python3", ["-m", "venv", venv], { stdio: "inherit" });
    const pip = (...args: string[]) =>
      execFileSync(
        python,
        ["-m", "pip", "install", "--quiet", "--no-index", "--find-links", wheels, ...args],
        {
          stdio: "inherit",
          env: { ...process.env, PIP_DISABLE_PIP_VERSION_CHECK: "1" },
        },
      );
    pip(`pulumi==${pulumiVersion().replace(/^v/, "")}`);
    pip(path.join(ws!.dir, "sdk", "python"));
  });
});

afterAll(() => {
  ws?.cleanup();
  console.log(timings.table("Python SDK, seconds"));
});

it("the schema has exactly the seven components and no type named …Args", () => {
  expect(Object.keys(schema.resources).sort()).toEqual(COMPONENTS.map((c) => `pulumi-lvm:index:${c}`));
  for (const r of Object.values(schema.resources)) expect(r.isComponent).toBe(true);
  expect(Object.keys(schema.types).filter((t) => t.endsWith("Args"))).toEqual([]);
});

it("the generated SDK has the seven ComponentResources and the clean arg class names", () => {
  const printed = execFileSync(
    python,
    [
      "-c",
      `import inspect, pulumi, ${SDK_MODULE} as lvm
names = [n for n, c in inspect.getmembers(lvm, inspect.isclass)]
print(sorted(n for n, c in inspect.getmembers(lvm, inspect.isclass) if issubclass(c, pulumi.ComponentResource)))
print(sorted(n for n in names if n.endswith("ArgsArgs")))
print("NodeSetTemplateArgs" in names, "VolumeGroupSpecArgs" in names)`,
    ],
    { encoding: "utf8" },
  );
  expect(printed.trim().split("\n")).toEqual([
    `[${COMPONENTS.map((c) => `'${c}'`).join(", ")}]`,
    "[]",
    "True True",
  ]);
});

it("examples/python-quickstart and the engine test's Python program use the SDK as generated", () => {
  const r = spawnSync(python, [CHECKER, SDK_MODULE, ...PROGRAMS], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  expect(r.stdout).toMatch(/^checked \d+ calls, \d+ outputs\n$/);
  const [, calls, outputs] = /checked (\d+) calls, (\d+) outputs/.exec(r.stdout)!;
  // Both programs build a template, volume groups, device classes, agents, an LvmSystem and a NodeSet.
  expect(Number(calls)).toBeGreaterThanOrEqual(20);
  expect(Number(outputs)).toBeGreaterThanOrEqual(5);
  expect(r.status).toBe(0);
});

it("the check fails on a program that misnames a class, an argument or an output", () => {
  const bad = path.join(ws!.dir, "bad.py");
  fs.writeFileSync(
    bad,
    [
      `import ${SDK_MODULE} as lvm`,
      `template = lvm.NodeSetTemplateArgs(volume_groups=[], device_class=[])`,
      `system = lvm.LvmSystem("lvm", agent_imag="x")`,
      `node_set = lvm.NodeSet("n", template=template)`,
      `print(node_set.storage_class, system.namespace)`,
      `lvm.TemplateArgsArgs()`,
      "",
    ].join("\n"),
  );
  const r = spawnSync(python, [CHECKER, SDK_MODULE, bad], { encoding: "utf8" });
  expect(r.status).toBe(1);
  expect(r.stdout.split("\n").filter((l) => l.startsWith(bad))).toEqual([
    `${bad}:2: NodeSetTemplateArgs(...): got an unexpected keyword argument 'device_class'`,
    `${bad}:3: LvmSystem(...): got an unexpected keyword argument 'agent_imag'`,
    `${bad}:6: ${SDK_MODULE} has no class TemplateArgsArgs`,
    `${bad}:5: NodeSet has no output storage_class`,
  ]);
});
