/**
 * `npm pack --dry-run --json` and `npm publish --dry-run` as a release script or a registry's CI runs
 * them: the JSON report is the whole of stdout (the pack scripts, build-if-stale's line and a
 * compile it starts among them, write to stderr), and publishing would go through.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

jest.setTimeout(300_000);

const repo = path.resolve(__dirname, "..", "..");

test("npm pack --dry-run --json prints one JSON report, naming the package's files", () => {
  const stdout = execFileSync("npm", ["pack", "--dry-run", "--json"], {
    cwd: repo,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  const report = JSON.parse(stdout) as Array<{ name: string; files: Array<{ path: string }> }>;
  expect(report).toHaveLength(1);
  expect(report[0]!.name).toBe("pulumi-lvm");
  const files = report[0]!.files.map((f) => f.path);
  expect(files).toEqual(expect.arrayContaining(["package.json", "dist/src/index.js", "tsconfig.json"]));
});

test("npm publish --dry-run passes, with nothing npm had to correct in package.json", () => {
  const r = spawnSync("npm", ["publish", "--dry-run"], { cwd: repo, encoding: "utf8" });
  // Without a login npm says so (a dry run needs none); any other warning is a problem with the package.
  const warnings = r.stderr
    .split("\n")
    .filter((l) => /^npm warn/i.test(l) && !/requires you to be logged in/.test(l));
  expect(warnings).toEqual([]);
  expect(r.status).toBe(0);
  expect(r.stdout).toMatch(/^\+ pulumi-lvm@\d+\.\d+\.\d+$/m);
});

test("package.json tells a registry's reader where the project lives and what it runs on", () => {
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as Record<string, unknown>;
  expect(pkg.repository).toMatchObject({ type: "git", url: expect.stringMatching(/^git\+https:\/\//) });
  expect(pkg.homepage).toMatch(/^https:\/\//);
  expect(pkg.bugs).toMatchObject({ url: expect.stringMatching(/^https:\/\//) });
  expect(pkg.keywords).toEqual(expect.arrayContaining(["pulumi", "kubernetes", "lvm", "topolvm"]));
  expect(pkg.engines).toMatchObject({ node: expect.any(String) });
});

test("the tsconfig.json that ships names no test types (a consumer has no @types/jest)", () => {
  // The packed tsconfig.json is what Pulumi's schema inference reads in an installed copy
  // (docs/languages.md); the tests' jest globals come from test/jest-globals.d.ts, which is not packed.
  const config = JSON.parse(fs.readFileSync(path.join(repo, "tsconfig.json"), "utf8")) as {
    compilerOptions: { types?: string[] };
  };
  expect(config.compilerOptions.types).toEqual(["node"]);
});
