/**
 * The examples with the real Pulumi engine (the CLI and Node.js language host of test/pulumi,
 * docs/testing-pulumi.md): `pulumi preview` of each example's project, and of the repository root's
 * (main: examples/quickstart/). The examples deploy to Kubernetes, and this tier runs without the
 * pulumi-resource-kubernetes plugin (built from source by `npm run test:kubernetes`, whose cold build
 * does not fit CI's budget: docs/testing-cluster.md, "CI budget"), so each preview fails, and the
 * test asserts exactly how:
 *
 * - the engine ran the example's index.ts: the program registered its LvmSystem, and the engine's
 *   step for it records the source position of `new LvmSystem(` in that example's index.ts (not the
 *   library's package main, which is what ran before the examples had a package.json of their own:
 *   a preview with no resources, exit 0);
 * - the one error is the default Kubernetes provider (the first Kubernetes resource the LvmSystem
 *   registers) missing its plugin, at the version of @pulumi/kubernetes in node_modules.
 *
 * The binaries missing is a failure that says how to build them, never a skip.
 */
import * as fs from "node:fs";
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import { PulumiWorkspace, requirePulumiBinaries } from "../pulumi/cli";

jest.setTimeout(300_000);

const repo = path.resolve(__dirname, "../..");
const ROOT = "/var/tmp/pulumi-e2e-tests";
const k8sVersion = (
  JSON.parse(
    fs.readFileSync(path.join(repo, "node_modules", "@pulumi", "kubernetes", "package.json"), "utf8"),
  ) as { version: string }
).version;

interface Preview {
  steps?: Array<{ op: string; urn: string; newState?: { type: string; sourcePosition?: string } }>;
  diagnostics?: Array<{ urn?: string; message: string; severity: string }>;
}

/** The 1-based line of `new LvmSystem(` in an example's index.ts. */
function lvmSystemLine(example: string): number {
  const lines = fs.readFileSync(path.join(repo, example, "index.ts"), "utf8").split("\n");
  const i = lines.findIndex((l) => l.includes("new LvmSystem("));
  if (i < 0) throw new Error(`${example}/index.ts has no "new LvmSystem("`);
  return i + 1;
}

beforeAll(() => requirePulumiBinaries());

describe.each([
  ["Pulumi.yaml", "examples/quickstart", "pulumi-lvm"],
  ["examples/quickstart/Pulumi.yaml", "examples/quickstart", "pulumi-lvm-quickstart"],
  ["examples/multi-nodeset/Pulumi.yaml", "examples/multi-nodeset", "pulumi-lvm-multi-nodeset"],
  ["examples/org-component/Pulumi.yaml", "examples/org-component", "acme-edge-storage"],
])("pulumi preview of %s", (projectFile, example, project) => {
  let ws: PulumiWorkspace | undefined;
  afterAll(() => ws?.cleanup());

  it(`runs ${example}/index.ts up to its first Kubernetes resource, and fails only because pulumi-resource-kubernetes is missing`, () => {
    ws = new PulumiWorkspace("dev", randomBytes(12).toString("hex"), {
      root: ROOT,
      projectFile: path.join(repo, projectFile),
    });
    expect(ws.main).toBe(path.join(repo, example));
    ws.init();
    // The quickstart requires its disk list; the other examples take no config here.
    if (example === "examples/quickstart") ws.ok(["config", "set", "--path", "diskSerials[0]", "SN-AAA111"]);
    const r = ws.run(["preview", "--json"]);
    expect(r.code).not.toBe(0);
    const preview = JSON.parse(r.stdout) as Preview;

    const stack = `urn:pulumi:dev::${project}`;
    const lvm = preview.steps?.find((s) => s.urn === `${stack}::pulumi-lvm:index:LvmSystem::lvm`);
    expect(lvm).toMatchObject({ op: "create" });
    expect(lvm!.newState!.sourcePosition).toMatch(
      new RegExp(`/${example}/index\\.ts#${lvmSystemLine(example)},\\d+$`),
    );
    // The library's package main did not run as the program: the example imports "pulumi-lvm"
    // (examples/node_modules/pulumi-lvm, the repository's compiled dist/) and its LvmSystem's source
    // position, above, is the example's own index.ts.

    const errors = (preview.diagnostics ?? []).filter((d) => d.severity === "error");
    expect(errors).toEqual([
      {
        urn: `${stack}::pulumi:providers:kubernetes::default_${k8sVersion.replace(/\./g, "_")}`,
        message: expect.stringMatching(
          new RegExp(
            `^error: no resource plugin 'pulumi-resource-kubernetes' found in the workspace at version v${k8sVersion.replace(/\./g, "\\.")} or on your \\$PATH`,
          ),
        ),
        severity: "error",
      },
    ]);
  });
});
