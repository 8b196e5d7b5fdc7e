/**
 * The `prepare` script (scripts/build-if-stale.js): a clone compiles, an installed package that
 * ships dist/ does not (`pulumi package add` runs `npm install` inside it: docs/languages.md).
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { staleSources } from "../../scripts/build-if-stale";

const repo = path.resolve(__dirname, "..", "..");
const SCRIPT = path.join(repo, "scripts", "build-if-stale.js");
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "build-if-stale-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(rel: string, text = "", mtime?: Date): void {
  const file = path.join(dir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
  if (mtime) fs.utimesSync(file, mtime, mtime);
}
const T0 = new Date("2026-01-01T00:00:00Z");
const T1 = new Date("2026-01-02T00:00:00Z");

describe("staleSources", () => {
  it("a clone without dist/: every shipped source is stale; tests and declarations are not sources", () => {
    write("tsconfig.json", "{}", T0);
    write("src/index.ts", "", T0);
    write("src/a/b.ts", "", T0);
    write("src/a/b.test.ts", "", T0);
    write("src/types.d.ts", "", T0);
    write("provider/index.ts", "", T0);
    expect(staleSources(dir).sort()).toEqual(["provider/index.ts", "src/a/b.ts", "src/index.ts"]);
  });

  it("dist/ as new as its sources is current (an npm tarball gives every file one mtime)", () => {
    for (const f of [
      "tsconfig.json",
      "src/index.ts",
      "dist/src/index.js",
      "provider/p.ts",
      "dist/provider/p.js",
    ])
      write(f, "", T0);
    expect(staleSources(dir)).toEqual([]);
  });

  it("a source edited after the build, a module missing, or a newer tsconfig.json makes it stale", () => {
    for (const f of ["tsconfig.json", "src/index.ts", "dist/src/index.js", "src/x.ts", "dist/src/x.js"])
      write(f, "", T0);
    write("src/x.ts", "changed", T1);
    write("src/new.ts", "", T0);
    expect(staleSources(dir).sort()).toEqual(["src/new.ts", "src/x.ts"]);
    write("tsconfig.json", "{}", T1);
    expect(staleSources(dir).sort()).toEqual(["src/index.ts", "src/new.ts", "src/x.ts"]);
  });
});

describe("scripts/build-if-stale.js on what npm pack publishes", () => {
  it("does not compile: dist/ ships, and the tarball's sources are no newer", () => {
    const [packed] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], {
        cwd: repo,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      }),
    ) as Array<{ filename: string }>;
    const pkg = path.join(dir, "package");
    execFileSync("tar", ["-xzf", path.join(dir, packed!.filename), "-C", dir]);
    expect(fs.existsSync(path.join(pkg, "scripts", "build-if-stale.js"))).toBe(true);
    // No typescript here (no node_modules): a build attempt would fail, so exit 0 means it skipped.
    const r = spawnSync(process.execPath, ["scripts/build-if-stale.js"], { cwd: pkg, encoding: "utf8" });
    expect(r.stdout).toContain("dist/ is current");
    expect(r.status).toBe(0);
    expect(fs.existsSync(path.join(pkg, "node_modules"))).toBe(false);
  });

  it("runs `npm run build` when a module is missing, and passes its exit code on", () => {
    const pkg = path.join(dir, "pkg");
    fs.mkdirSync(path.join(pkg, "scripts"), { recursive: true });
    fs.copyFileSync(SCRIPT, path.join(pkg, "scripts", "build-if-stale.js"));
    fs.cpSync(path.join(repo, "src", "index.ts"), path.join(pkg, "src", "index.ts"));
    fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ scripts: { build: "exit 7" } }));
    const r = spawnSync(process.execPath, ["scripts/build-if-stale.js"], { cwd: pkg, encoding: "utf8" });
    expect(r.stdout).toContain("compiling TypeScript (1 source file(s)");
    expect(r.status).toBe(7);
  });
});
