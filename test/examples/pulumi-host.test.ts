import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

/**
 * Each example loads the way `pulumi up` loads it: the Pulumi Node.js host's TypeScript setup
 * (@pulumi/pulumi's tsutils: its vendored ts-node with the project's typescript, type-checking, the
 * tsconfig.json of the program's directory), run in a fresh node process with the program's
 * directory as working directory, against Pulumi's mocks (the Pulumi CLI cannot be installed here).
 * A type error or a missing module in an example fails here, as it would fail `pulumi up`.
 */
const repo = path.resolve(__dirname, "../..");

const HOST = `
const path = require("path"), fs = require("fs");
const cwd = process.cwd();
const pulumiDir = path.dirname(require.resolve("@pulumi/pulumi/package.json", { paths: [cwd] }));
const tsutils = require(path.join(pulumiDir, "tsutils.js"));
const tsConfigPath = "tsconfig.json";
const compilerOptions = tsutils.loadTypeScriptCompilerOptions(tsConfigPath);
const { tsnodeRequire, typescriptRequire } = tsutils.typeScriptRequireStrings();
require(tsnodeRequire).register({
  compiler: typescriptRequire, transpileOnly: compilerOptions.noCheck, project: tsConfigPath, skipProject: !fs.existsSync(tsConfigPath),
  compilerOptions: { target: "ES2020", module: "nodenext", moduleResolution: "nodenext", sourceMap: "true", ...compilerOptions },
});
const pulumi = require(require.resolve("@pulumi/pulumi", { paths: [cwd] }));
const types = [];
pulumi.runtime.setMocks({ newResource: (a) => { types.push(a.type); return { id: a.name + "-id", state: a.inputs }; }, call: (a) => a.inputs }, "project", "stack", true);
pulumi.runtime.runInPulumiStack(async () => require(cwd)).then(
  () => setTimeout(() => console.log(JSON.stringify(types)), 200),
  (e) => { console.error(e.message); process.exit(1); },
);
`;

function runUnderPulumiHost(
  dir: string,
  config: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  // From a file, as the language host runs its entry point: under `node -e`, the closure
  // serialization of a dynamic provider (examples/bare-hosts' NodeSetDisks) touches the REPL-style
  // globals (the deprecated `sys`, WASI) and Node warns on stderr.
  const host = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-host-")), "host.js");
  fs.writeFileSync(host, HOST);
  const r = spawnSync(process.execPath, [host], {
    cwd: path.join(repo, dir),
    // The stack's config, as the CLI hands it to the language host.
    env: { ...process.env, PULUMI_CONFIG: JSON.stringify(config) },
    encoding: "utf8",
    timeout: 240_000,
  });
  fs.rmSync(path.dirname(host), { recursive: true, force: true });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe.each([
  ["examples/quickstart", "pulumi-lvm:index:NodeSet"],
  ["examples/multi-nodeset", "pulumi-lvm:index:NodeSet"],
  ["examples/org-component", "acme:storage:EdgeStorage"],
])("%s", (dir, component) => {
  test("type-checks and runs under the Pulumi Node.js host's ts-node", () => {
    const r = runUnderPulumiHost(dir);
    expect(r.stderr).toBe("");
    expect(r.status).toBe(0);
    const types = JSON.parse(r.stdout.trim().split("\n").pop()!) as string[];
    expect(types).toContain("pulumi-lvm:index:LvmSystem");
    expect(types).toContain(component);
  }, 240_000);
});

test("examples/bare-hosts type-checks and runs under the Pulumi Node.js host's ts-node", () => {
  const r = runUnderPulumiHost("examples/bare-hosts", {
    "project:sshPrivateKey":
      "-----BEGIN OPENSSH PRIVATE KEY-----\nexample\n-----END OPENSSH PRIVATE KEY-----",
    // Any readable file stands in for the bundle (only its hash is used here).
    "project:agentBundle": "package.json",
  });
  expect(r.stderr).toBe("");
  expect(r.status).toBe(0);
  const types = JSON.parse(r.stdout.trim().split("\n").pop()!) as string[];
  expect(types.filter((t) => t === "pulumi-lvm:index:AgentHost")).toHaveLength(3);
  expect(types).toContain("command:remote:Command");
  expect(types).toContain("pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks");
}, 240_000);
