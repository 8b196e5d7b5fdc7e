/**
 * The npm package as a user gets it: `npm pack` holds what a user needs (compiled code, CRDs, docs)
 * and nothing of the tests; a fresh Pulumi TypeScript program outside this repository (its own
 * package.json and tsconfig) installs the tarball, type-checks the quickstart against the packed
 * .d.ts files, runs it under Pulumi's mocks to the end, and under the real engine (test/pulumi's CLI)
 * as far as the engine goes here: up to the first Kubernetes resource, whose provider plugin
 * (pulumi-resource-kubernetes) cannot be built on this machine.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { PulumiWorkspace, requirePulumiBinaries } from "../pulumi/cli";
import { packPackage, requireFreshBuild } from "../pulumi/component-package";
import { registeredTypes, runUnderPulumiHost } from "../examples/pulumi-host";

jest.setTimeout(600_000);

const repo = path.resolve(__dirname, "../..");
const ROOT = "/var/tmp/package-tests";
const lockVersion = (name: string): string =>
  JSON.parse(fs.readFileSync(path.join(repo, "package-lock.json"), "utf8")).packages[`node_modules/${name}`]
    .version;

let dir: string;
let tarball: string;
let files: string[];
beforeAll(() => {
  fs.mkdirSync(ROOT, { recursive: true });
  dir = fs.mkdtempSync(path.join(ROOT, "program-"));
  // As `npm publish` packs it: with npm-shrinkwrap.json (prepack), dist/ as `npm install` compiled it.
  requireFreshBuild(repo);
  ({ tarball, files } = packPackage(repo, dir));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

test("npm pack holds the compiled code, the CRDs and the docs, and nothing of the tests", () => {
  for (const needed of [
    "package.json",
    "README.md",
    "LICENSE",
    "dist/src/index.js",
    "dist/src/index.d.ts",
    "dist/src/cli/main.js",
    "dist/provider/index.js",
    "deploy/crds/lvm.topolvm.io_lvmnodesets.yaml",
    "deploy/crds/lvm.topolvm.io_lvmnodes.yaml",
    "docs/components.md",
    "docs/image.md",
    // A component provider (docs/languages.md): Pulumi infers the schema from the TypeScript sources.
    "PulumiPlugin.yaml",
    "tsconfig.json",
    "src/index.ts",
  ])
    expect(files).toContain(needed);
  const testFiles = files.filter((f) => /\.test\.|\/testing\/|\/testing\.|^test\//.test(f));
  expect(testFiles).toEqual([]);
  // Test doubles live in test/support and test hooks in test entry points: nothing of them is
  // packed, and no packed file refers to them.
  const testCode = files.filter((f) => {
    if (!/\.(js|ts|mjs)$/.test(f)) return false;
    const text = fs.readFileSync(path.join(repo, f), "utf8");
    return /TEST HOOK|_TEST_PAUSE_|test\/support\//.test(text);
  });
  expect(testCode).toEqual([]);
});

/** A Pulumi TypeScript project of its own: the quickstart, importing "pulumi-lvm" from the tarball. */
function writeProgram(): string {
  const program = path.join(dir, "quickstart");
  fs.mkdirSync(program);
  const write = (name: string, text: string) => fs.writeFileSync(path.join(program, name), text);
  write(
    "package.json",
    JSON.stringify(
      {
        name: "my-storage",
        private: true,
        main: "bin/index.js",
        dependencies: {
          "pulumi-lvm": `file:${tarball}`,
          "@pulumi/pulumi": lockVersion("@pulumi/pulumi"),
          "@pulumi/kubernetes": lockVersion("@pulumi/kubernetes"),
          // examples/bare-hosts (AgentHost), run below.
          "@pulumi/command": lockVersion("@pulumi/command"),
        },
        devDependencies: { typescript: lockVersion("typescript"), "@types/node": lockVersion("@types/node") },
      },
      null,
      2,
    ),
  );
  write(
    "tsconfig.json",
    JSON.stringify({
      compilerOptions: {
        strict: true,
        target: "ES2022",
        module: "commonjs",
        moduleResolution: "node",
        outDir: "bin",
        skipLibCheck: true,
        types: ["node"],
      },
      files: ["index.ts", "mocks.ts"],
    }),
  );
  write(
    "Pulumi.yaml",
    "name: my-storage\nruntime:\n  name: nodejs\n  options:\n    typescript: false\nmain: bin/index.js\n",
  );
  // The quickstart as it is: it imports "pulumi-lvm" (test/examples/package-roots.test.ts).
  write("index.ts", fs.readFileSync(path.join(repo, "examples/quickstart/index.ts"), "utf8"));
  write(
    "mocks.ts",
    `import * as pulumi from "@pulumi/pulumi";
const registered: string[] = [];
pulumi.runtime.setAllConfig({ "my-storage:diskSerials": JSON.stringify(["S4EWNX0R123456", "S4EWNX0R654321"]) });
pulumi.runtime.setMocks(
  {
    newResource: (args) => {
      registered.push(args.type);
      return { id: \`\${args.name}-id\`, state: args.inputs };
    },
    call: (args) => args.inputs,
  },
  "my-storage",
  "dev",
);
// eslint-disable-next-line @typescript-eslint/no-require-imports
require("./index");
process.on("beforeExit", () => {
  const counts: Record<string, number> = {};
  for (const type of registered) counts[type] = (counts[type] ?? 0) + 1;
  console.log(JSON.stringify(counts));
});
`,
  );
  return program;
}

describe("a fresh Pulumi program that installs the packed tarball", () => {
  let program: string;
  beforeAll(() => {
    program = writeProgram();
    execFileSync("npm", ["install", "--no-audit", "--no-fund", "--prefer-offline"], {
      cwd: program,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
    execFileSync(path.join(program, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], { cwd: program });
  });

  test("installs one copy of the Pulumi SDK: pulumi-lvm's peer dependency is the program's own", () => {
    // The tarball's npm-shrinkwrap.json locks pulumi-lvm's dependencies, not its development and
    // peer entries: @pulumi/pulumi is the program's, nothing is nested under pulumi-lvm.
    expect(files).toContain("npm-shrinkwrap.json");
    expect(fs.existsSync(path.join(program, "node_modules/pulumi-lvm/node_modules/@pulumi"))).toBe(false);
    expect(fs.existsSync(path.join(program, "node_modules/pulumi-lvm/dist/src/index.js"))).toBe(true);
  });

  test("runs the quickstart to the end under Pulumi's mocks", () => {
    const out = execFileSync(process.execPath, ["bin/mocks.js"], { cwd: program, encoding: "utf8" });
    const counts = JSON.parse(out.trim().split("\n").pop()!) as Record<string, number>;
    expect(counts).toMatchObject({
      "pulumi-lvm:index:LvmSystem": 1,
      "pulumi-lvm:index:NodeSet": 1,
      "kubernetes:apps/v1:DaemonSet": 1,
      "kubernetes:apps/v1:Deployment": 1,
      "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinitionPatch": 2,
    });
  });

  test("runs under the real engine up to the first Kubernetes resource (no pulumi-resource-kubernetes here)", () => {
    requirePulumiBinaries();
    const ws = new PulumiWorkspace("dev", randomBytes(12).toString("hex"), {
      root: ROOT,
      projectFile: path.join(program, "Pulumi.yaml"),
    });
    try {
      ws.init();
      ws.ok(["config", "set", "--path", "diskSerials[0]", "S4EWNX0R123456"]);
      const r = ws.run(["preview", "--json"]);
      expect(r.code).not.toBe(0);
      const preview = JSON.parse(r.stdout) as {
        steps?: Array<{ op: string; urn: string }>;
        diagnostics?: Array<{ urn?: string; message: string; severity: string }>;
      };
      expect(preview.steps).toContainEqual(
        expect.objectContaining({
          op: "create",
          urn: "urn:pulumi:dev::my-storage::pulumi-lvm:index:LvmSystem::lvm",
        }),
      );
      const version = lockVersion("@pulumi/kubernetes");
      expect((preview.diagnostics ?? []).filter((d) => d.severity === "error")).toEqual([
        expect.objectContaining({
          message: expect.stringContaining(
            `no resource plugin 'pulumi-resource-kubernetes' found in the workspace at version v${version}`,
          ),
        }),
      ]);
    } finally {
      ws.cleanup();
    }
  });

  /**
   * Each example as a user copies it: its directory as it is in the repository, beside this
   * program (sharing its one install of the tarball: one pack, one npm install for all), type-checked
   * against the packed .d.ts files and run by the Pulumi Node.js host's ts-node under mocks.
   */
  describe.each([
    ["quickstart", "pulumi-lvm:index:NodeSet", { "project:diskSerials": JSON.stringify(["S4EWNX0R123456"]) }],
    ["multi-nodeset", "pulumi-lvm:index:NodeSet", {}],
    ["org-component", "acme:storage:EdgeStorage", {}],
    [
      "bare-hosts",
      "pulumi-lvm:index:AgentHost",
      {
        "project:sshPrivateKey":
          "-----BEGIN OPENSSH PRIVATE KEY-----\nexample\n-----END OPENSSH PRIVATE KEY-----",
        "project:agentBundle": "package.json",
      },
    ],
  ])("examples/%s, copied out of the repository", (example, component, config) => {
    test("imports pulumi-lvm from the installed tarball, type-checks and runs its preview under mocks", () => {
      const copy = path.join(program, "examples", example);
      fs.cpSync(path.join(repo, "examples", example), copy, { recursive: true });
      // Resolved as node resolves it from the example (not jest, which maps "pulumi-lvm" to src/).
      const resolved = execFileSync(process.execPath, ["-p", 'require.resolve("pulumi-lvm")'], {
        cwd: copy,
        encoding: "utf8",
      }).trim();
      expect(resolved).toBe(path.join(fs.realpathSync(program), "node_modules/pulumi-lvm/dist/src/index.js"));
      const r = runUnderPulumiHost(copy, config);
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
      expect(registeredTypes(r.stdout)).toContain(component);
    });
  });
});
