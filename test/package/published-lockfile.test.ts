/**
 * What `pulumi package add ./node_modules/pulumi-lvm` installs and runs on the deployer's machine
 * (docs/languages.md): the language host runs `npm install` inside the installed package, which
 * must install the versions this repository locked, not whatever the `^` ranges resolve to that
 * day (scripts/shrinkwrap.js); and the NodeSetDisks provider runtime an installed package loads is
 * its compiled dist/, never its TypeScript sources through a tsx that happens to resolve.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { installPackedPackage, packPackage, requireFreshBuild } from "../pulumi/component-package";

jest.setTimeout(600_000);

const repo = path.resolve(__dirname, "../..");
const ROOT = "/var/tmp/package-tests";
const readJson = (file: string) => JSON.parse(fs.readFileSync(file, "utf8")) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

let dir: string;
beforeAll(() => {
  requireFreshBuild(repo);
  fs.mkdirSync(ROOT, { recursive: true });
  dir = fs.mkdtempSync(path.join(ROOT, "lockfile-"));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe("the packed package carries its lockfile", () => {
  let unpacked: string;
  beforeAll(() => {
    const { tarball, files } = packPackage(repo, dir);
    expect(files).toContain("npm-shrinkwrap.json");
    unpacked = path.join(dir, "unpacked");
    fs.mkdirSync(unpacked);
    execFileSync("tar", ["-xzf", tarball, "-C", unpacked, "--strip-components=1"]);
  });

  test("npm-shrinkwrap.json is package-lock.json, and only the tarball has it", () => {
    expect(readJson(path.join(unpacked, "npm-shrinkwrap.json"))).toEqual(
      readJson(path.join(repo, "package-lock.json")),
    );
    // postpack removed it: in a checkout npm would prefer it to package-lock.json.
    expect(fs.existsSync(path.join(repo, "npm-shrinkwrap.json"))).toBe(false);
  });

  test("npm install in the installed package resolves every dependency, development ones too, to the locked version", () => {
    // What the Node.js language host runs there (npm install), resolving only: no download.
    execFileSync(
      "npm",
      ["install", "--package-lock-only", "--ignore-scripts", "--prefer-offline", "--no-audit", "--no-fund"],
      { cwd: unpacked, stdio: ["ignore", "pipe", "pipe"] },
    );
    const locked = readJson(path.join(repo, "package-lock.json")).packages as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const resolved = readJson(path.join(unpacked, "npm-shrinkwrap.json")).packages as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    const differ = Object.keys({ ...locked, ...resolved }).filter(
      (k) =>
        k !== "" &&
        (locked[k]?.version !== resolved[k]?.version || locked[k]?.integrity !== resolved[k]?.integrity),
    );
    expect(differ).toEqual([]);
    expect(Object.keys(resolved)).toEqual(
      expect.arrayContaining(["node_modules/typescript", "node_modules/tsx"]),
    );
  });
});

test("the installed package's NodeSetDisks runtime is its compiled dist/, even where tsx resolves", () => {
  const project = path.join(dir, "program");
  installPackedPackage(repo, project);
  // A program whose own node_modules has tsx (a TypeScript user's usually does).
  fs.symlinkSync(path.join(repo, "node_modules", "tsx"), path.join(project, "node_modules", "tsx"), "dir");
  const probe = `
    const { nodeSetDisksProvider } = require("pulumi-lvm/dist/provider/provider.js");
    Promise.resolve()
      .then(() => nodeSetDisksProvider.check({}, {}))
      .catch(() => undefined)
      .then(() => {
        const loaded = Object.keys(require.cache).filter((f) => f.includes("/provider/runtime/v1/index."));
        console.log(JSON.stringify(loaded.map((f) => require("path").relative(process.cwd(), f))));
      });`;
  // The engine starts the dynamic provider in the program's directory.
  const out = execFileSync(process.execPath, ["-e", probe], { cwd: project, encoding: "utf8" });
  expect(JSON.parse(out.trim().split("\n").pop()!)).toEqual([
    "node_modules/pulumi-lvm/dist/provider/runtime/v1/index.js",
  ]);
});
