import { runCaptured } from "../../test/support/cli/captured-io";
import * as fs from "node:fs";
import { EXAMPLE_FILES } from "../../test/api/rule-cases";
import YAML from "yaml";
import { isOurs, problemText, run, VALIDATE_USAGE, type FileProblem } from "./validate";

/** Runs `pulumi-lvm validate` over in-memory files. */
async function validate(argv: string[], files: Record<string, string>) {
  return runCaptured(run, argv, files);
}

const nodeSet = fs.readFileSync(EXAMPLE_FILES.LVMNodeSet, "utf8");
const node = fs.readFileSync(EXAMPLE_FILES.LVMNode, "utf8");

const TWO_BROKEN = `apiVersion: v1
kind: Namespace
metadata:
  name: storage
---
apiVersion: lvm.topolvm.io/v2alpha1
kind: LVMNodeSet
metadata:
  name: fast
  namespace: storage
spec:
  template:
    volumeGroups:
      - name: vg1
        deviceSelector:
          deviceSelectorTerms:
            - matchExpressions: []
    deviceClasses:
      - name: fast
        strategy: Thin
        volumeGroup: vg1
        thin: { poolName: pool, sizePercent: 90, overprovisionRatio: 2 }
      - name: faster
        strategy: Thin
        volumeGroup: vg1
        thin: { poolName: pool2, sizePercent: 120, overprovisionRatio: 2 }
---
apiVersion: lvm.topolvm.io/v2alpha1
kind: LVMNode
metadata:
  name: node-1
spec:
  volumeGroups:
    - name: vg1
      deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: kname, operator: Any }] }] }
  deviceClasses:
    - { name: linear, strategy: Thick, volumeGroup: vg2, snapshotClass: {} }
  unknownSetting: true
---
`;

describe("pulumi-lvm validate", () => {
  test("the proposal's examples are valid: exit 0, nothing printed", async () => {
    const r = await validate(["set.yaml", "node.yaml"], { "set.yaml": nodeSet, "node.yaml": node });
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
  });

  test("--verbose lists valid objects and skipped documents on stderr", async () => {
    const r = await validate(["-v", "all.yaml"], {
      "all.yaml": `apiVersion: v1\nkind: ConfigMap\n---\n${nodeSet}`,
    });
    expect(r).toEqual({
      code: 0,
      stdout: "",
      stderr: "all.yaml: document 1: skipped (ConfigMap, v1)\nall.yaml: LVMNodeSet/my-lvmnodeset: valid\n",
    });
  });

  test("two broken objects in one file: one line per problem, exit 1", async () => {
    const r = await validate(["broken.yaml"], { "broken.yaml": TWO_BROKEN });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe("");
    expect(r.stdout.split("\n")).toEqual([
      "broken.yaml: LVMNodeSet/fast: spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions: a device selector term needs at least one expression (an empty term would match every disk)",
      "broken.yaml: LVMNodeSet/fast: spec.template.deviceClasses[1].thin.sizePercent: must be between 1 and 100 (got 120)",
      "broken.yaml: LVMNode/node-1: spec.deviceClasses[0].snapshotClass: is only supported for strategy Thin (TopoLVM snapshots are thin snapshots)",
      "broken.yaml: LVMNode/node-1: spec.unknownSetting: unknown field",
      'broken.yaml: LVMNode/node-1: spec.deviceClasses[0].volumeGroup: names volume group "vg2", which is not in volumeGroups (have: vg1)',
      "",
    ]);
  });

  test("every file is checked, valid ones included, and the exit code is 1 if any has problems", async () => {
    const r = await validate(["ok.yaml", "missing.yaml", "broken.yaml"], {
      "ok.yaml": node,
      "broken.yaml": TWO_BROKEN,
    });
    expect(r.code).toBe(1);
    expect(r.stdout.split("\n").filter((l) => !l.startsWith("broken.yaml: "))).toEqual([
      "missing.yaml: cannot read it: no such file",
      "",
    ]);
  });

  test.each([
    [
      "a wrong apiVersion on our kind",
      "apiVersion: apps/v1\nkind: LVMNodeSet\nmetadata: {name: x}\n",
      'bad.yaml: LVMNodeSet/x: apiVersion: must be "lvm.topolvm.io/v2alpha1" (got "apps/v1")',
    ],
    [
      "a misspelt kind in our apiVersion",
      "apiVersion: lvm.topolvm.io/v2alpha1\nkind: LVMNodeset\nmetadata: {name: x}\n",
      'bad.yaml: LVMNodeset/x: kind: must be "LVMNodeSet" or "LVMNode" (got "LVMNodeset")',
    ],
    [
      "no kind in our apiVersion",
      "apiVersion: lvm.topolvm.io/v2alpha1\nmetadata: {name: x}\n",
      'bad.yaml: (no kind)/x: kind: must be "LVMNodeSet" or "LVMNode" (got undefined)',
    ],
    [
      "a YAML syntax error",
      "spec:\n  a: [1, 2\n",
      "bad.yaml: Flow sequence in block collection must be sufficiently indented and end with a ] at line 3, column 1",
    ],
    [
      "a duplicate key",
      "kind: LVMNode\nkind: LVMNode\n",
      "bad.yaml: Map keys must be unique at line 2, column 1",
    ],
    [
      "only other kinds",
      "apiVersion: v1\nkind: ConfigMap\n",
      "bad.yaml: has no LVMNodeSet or LVMNode documents",
    ],
    ["an empty file", "", "bad.yaml: has no LVMNodeSet or LVMNode documents"],
    [
      "a v1alpha1 LVMCluster",
      "apiVersion: lvm.topolvm.io/v1alpha1\nkind: LVMCluster\n",
      "bad.yaml: has no LVMNodeSet or LVMNode documents",
    ],
  ])("%s", async (_what, text, line) => {
    const r = await validate(["bad.yaml"], { "bad.yaml": text });
    expect(r).toEqual({ code: 1, stdout: `${line}\n`, stderr: "" });
  });

  test.each([
    [[], "pulumi-lvm validate: no files given"],
    [["--strict", "a.yaml"], 'pulumi-lvm validate: unknown argument "--strict"'], // one wording for every subcommand (src/cli/args.ts)
  ])("%j is a usage error: exit 2", async (argv, message) => {
    const r = await validate(argv, {});
    expect(r).toEqual({ code: 2, stdout: "", stderr: `${message}\n\n${VALIDATE_USAGE}` });
  });

  test("--help prints the usage on stdout", async () => {
    expect(await validate(["--help"], {})).toEqual({ code: 0, stdout: VALIDATE_USAGE, stderr: "" });
  });

  test("a file named like an option can follow --", async () => {
    const r = await validate(["--", "-v.yaml"], { "-v.yaml": node });
    expect(r).toEqual({ code: 0, stdout: "", stderr: "" });
  });
});

describe("isOurs", () => {
  test.each([
    [{ apiVersion: "lvm.topolvm.io/v2alpha1", kind: "LVMNode" }, true],
    [{ apiVersion: "apps/v1", kind: "LVMNodeSet" }, true],
    [{ apiVersion: "lvm.topolvm.io/v2alpha1", kind: "Typo" }, true],
    [{ apiVersion: "lvm.topolvm.io/v1alpha1", kind: "LVMCluster" }, false],
    [{ apiVersion: "v1", kind: "ConfigMap" }, false],
    [["LVMNode"], false],
    ["LVMNode", false],
  ])("%j: %s", (value, ours) => {
    expect(isOurs(value)).toBe(ours);
  });
});

describe("-o json and yaml", () => {
  const broken = nodeSet.replace("sizePercent: 90", "sizePercent: 120");

  test("the problems as a document, with file, object, path and message; the text lines unchanged", async () => {
    const files = { "a.yaml": broken, "b.yaml": "a: [\n", "c.yaml": nodeSet };
    const argv = ["a.yaml", "b.yaml", "c.yaml"];
    const text = await validate(argv, files);
    const json = await validate(["-o", "json", ...argv], files);
    expect(json.code).toBe(1);
    expect(text.code).toBe(1);
    const doc = JSON.parse(json.stdout) as { apiVersion: string; valid: boolean; problems: FileProblem[] };
    expect(doc).toMatchObject({ apiVersion: "pulumi-lvm.dev/validate/v1", valid: false });
    expect(doc.problems[0]).toEqual({
      file: "a.yaml",
      object: "LVMNodeSet/my-lvmnodeset",
      path: "spec.template.deviceClasses[0].thin.sizePercent",
      message: "must be between 1 and 100 (got 120)",
    });
    expect(doc.problems.map((p) => p.file)).toContain("b.yaml");
    // c.yaml reuses a.yaml's set name: a problem of the whole run
    expect(doc.problems.map(problemText).join("\n") + "\n").toBe(text.stdout);
    const yaml = await validate(["--output=yaml", ...argv], files);
    expect(YAML.parse(yaml.stdout)).toEqual(doc);
  });

  test("all valid: {valid: true, problems: []}, exit 0", async () => {
    const r = await validate(["--json", "n.yaml"], { "n.yaml": nodeSet });
    expect(r).toEqual({
      code: 0,
      stdout: `${JSON.stringify({ apiVersion: "pulumi-lvm.dev/validate/v1", valid: true, problems: [] }, null, 2)}\n`,
      stderr: "",
    });
  });

  test("-o wide is not one of validate's formats: exit 2", async () => {
    const r = await validate(["-o", "wide", "n.yaml"], { "n.yaml": nodeSet });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("pulumi-lvm validate: -o wide: must be one of text, json, yaml\n");
  });
});
