/**
 * `pulumi-lvm validate` as a real process: the binary's entry point, its exit codes and its output
 * streams. Runs src/cli/main.ts through tsx (the compiled dist/src/cli/main.js is the same code).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { EXAMPLE_FILES } from "../api/rule-cases";

const ROOT = path.join(__dirname, "..", "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const MAIN = path.join(ROOT, "src", "cli", "main.ts");

jest.setTimeout(30_000);

function cli(...args: string[]) {
  return cliWithInput(undefined, ...args);
}

function cliWithInput(input: string | undefined, ...args: string[]) {
  if (!fs.existsSync(TSX)) throw new Error(`${TSX} is missing: run npm ci`);
  const r = spawnSync(TSX, [MAIN, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 20_000,
    ...(input !== undefined ? { input } : {}),
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-validate-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

test("the proposal's examples: exit 0, nothing on stdout", () => {
  expect(cli("validate", EXAMPLE_FILES.LVMNodeSet, EXAMPLE_FILES.LVMNode)).toEqual({
    code: 0,
    stdout: "",
    stderr: "",
  });
});

test("problems: exit 1, one line each on stdout", () => {
  const file = path.join(dir, "broken.yaml");
  const broken = fs
    .readFileSync(EXAMPLE_FILES.LVMNodeSet, "utf8")
    .replace("sizePercent: 90", "sizePercent: 120");
  fs.writeFileSync(file, `apiVersion: v1\nkind: Namespace\nmetadata: {name: x}\n---\n${broken}`);
  const r = cli("validate", "--verbose", file);
  expect(r.code).toBe(1);
  expect(r.stdout).toBe(
    `${file}: LVMNodeSet/my-lvmnodeset: spec.template.deviceClasses[0].thin.sizePercent: must be between 1 and 100 (got 120)\n`,
  );
  expect(r.stderr).toBe(`${file}: document 1: skipped (Namespace, v1)\n`);
});

test("a missing file: exit 1", () => {
  const file = path.join(dir, "missing.yaml");
  expect(cli("validate", file)).toEqual({
    code: 1,
    stdout: `${file}: cannot read it: no such file\n`,
    stderr: "",
  });
});

test("no command or an unknown one: usage on stderr, exit 2", () => {
  for (const args of [[], ["frobnicate"]]) {
    const r = cli(...args);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain("usage: pulumi-lvm <command> [arguments]");
  }
});

test("- reads standard input; -o json: exit 1 and the problems as a document on stdout", () => {
  const broken = fs
    .readFileSync(EXAMPLE_FILES.LVMNodeSet, "utf8")
    .replace("sizePercent: 90", "sizePercent: 120");
  const r = cliWithInput(broken, "validate", "-o", "json", "-");
  expect(r.code).toBe(1);
  expect(r.stderr).toBe("");
  expect(JSON.parse(r.stdout)).toEqual({
    apiVersion: "pulumi-lvm.dev/validate/v1",
    valid: false,
    problems: [
      {
        file: "<stdin>",
        object: "LVMNodeSet/my-lvmnodeset",
        path: "spec.template.deviceClasses[0].thin.sizePercent",
        message: "must be between 1 and 100 (got 120)",
      },
    ],
  });
});
