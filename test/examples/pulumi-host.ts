/**
 * A Pulumi TypeScript program run the way `pulumi up` runs it: the Pulumi Node.js host's TypeScript
 * setup (@pulumi/pulumi's tsutils: its vendored ts-node with the project's typescript,
 * type-checking, the tsconfig.json of the program's directory), in a fresh node process with the
 * program's directory as working directory, against Pulumi's mocks (the Pulumi CLI is not needed).
 * Prints the registered resource types as JSON on its last line. Used by test/examples and
 * test/package (the examples copied out of the repository).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

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

export function runUnderPulumiHost(
  cwd: string,
  config: Record<string, string> = {},
): { status: number | null; stdout: string; stderr: string } {
  // From a file, as the language host runs its entry point: under `node -e`, the closure
  // serialization of a dynamic provider (examples/bare-hosts' NodeSetDisks) touches the REPL-style
  // globals (the deprecated `sys`, WASI) and Node warns on stderr.
  const host = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-host-")), "host.js");
  fs.writeFileSync(host, HOST);
  const r = spawnSync(process.execPath, [host], {
    cwd,
    // The stack's config, as the CLI hands it to the language host.
    env: { ...process.env, PULUMI_CONFIG: JSON.stringify(config) },
    encoding: "utf8",
    timeout: 240_000,
  });
  fs.rmSync(path.dirname(host), { recursive: true, force: true });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** The resource types a runUnderPulumiHost run registered (its last line of stdout). */
export function registeredTypes(stdout: string): string[] {
  return JSON.parse(stdout.trim().split("\n").pop()!) as string[];
}
