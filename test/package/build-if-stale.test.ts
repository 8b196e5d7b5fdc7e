/**
 * The `prepare` script (scripts/build-if-stale.js): a clone compiles, an installed package that
 * ships dist/ does not (`pulumi package add` runs `npm install` inside it: docs/languages.md).
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { recordBuild, staleReason } from "../../scripts/build-if-stale";

const repo = path.resolve(__dirname, "..", "..");
const SCRIPT = path.join(repo, "scripts", "build-if-stale.js");
let dir: string;
beforeEach(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "build-if-stale-"));
});
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

function write(rel: string, text = ""): void {
  const file = path.join(dir, rel);
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(file, text);
}

describe("staleReason", () => {
  beforeEach(() => {
    write("tsconfig.json", "{}");
    write("src/index.ts", "export {};");
    write("src/a/b.ts", "export const b = 1;");
    write("provider/index.ts", "export {};");
  });

  it("a clone without dist/ is stale; after a build is recorded it is current", () => {
    expect(staleReason(dir)).toBe("dist/ is not built");
    write("dist/src/index.js");
    expect(staleReason(dir)).toMatch(/build-stamp.json is missing/);
    recordBuild(dir);
    expect(staleReason(dir)).toBeUndefined();
  });

  it("changed contents, a new source or a changed tsconfig.json make it stale; file times do not", () => {
    write("dist/src/index.js");
    recordBuild(dir);
    const later = new Date(Date.now() + 3_600_000);
    fs.utimesSync(path.join(dir, "src/a/b.ts"), later, later);
    expect(staleReason(dir)).toBeUndefined();
    for (const [file, text] of [
      ["src/a/b.ts", "export const b = 2;"],
      ["src/new.ts", "export {};"],
      ["tsconfig.json", '{"compilerOptions":{}}'],
    ] as const) {
      write("dist/src/index.js");
      recordBuild(dir);
      write(file, text);
      expect(staleReason(dir)).toMatch(/the sources changed since dist\/ was built/);
    }
  });

  it("tests and test doubles, which the package does not ship, do not count", () => {
    write("dist/src/index.js");
    recordBuild(dir);
    write("src/a/b.test.ts", "test");
    write("src/a/testing/double.ts", "double");
    write("src/planner/testing.ts", "double");
    expect(staleReason(dir)).toBeUndefined();
  });
});

describe("scripts/build-if-stale.js", () => {
  it("does not compile in the package as `npm install` lays out what npm pack publishes", () => {
    const [packed] = JSON.parse(
      execFileSync("npm", ["pack", "--json", "--ignore-scripts", "--pack-destination", dir], {
        cwd: repo,
        encoding: "utf8",
        stdio: ["ignore", "pipe", "pipe"],
      }),
    ) as Array<{ filename: string }>;
    const consumer = path.join(dir, "consumer");
    fs.mkdirSync(consumer);
    fs.writeFileSync(
      path.join(consumer, "package.json"),
      JSON.stringify({ name: "consumer", version: "1.0.0" }),
    );
    // A real install: npm gives each file the time it extracts it (src/ after dist/). Without the
    // peer dependencies (not needed here) and scripts; dependencies from npm's cache.
    execFileSync(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--prefer-offline",
        "--ignore-scripts",
        "--legacy-peer-deps",
        path.join(dir, packed!.filename),
      ],
      { cwd: consumer, stdio: ["ignore", "pipe", "pipe"] },
    );
    const pkg = path.join(consumer, "node_modules", "pulumi-lvm");
    expect(fs.existsSync(path.join(pkg, "dist", "build-stamp.json"))).toBe(true);
    // No typescript in this consumer: a build attempt would fail, so exit 0 means it skipped.
    const r = spawnSync(process.execPath, ["scripts/build-if-stale.js"], { cwd: pkg, encoding: "utf8" });
    // Its words go to stderr: stdout is npm pack --json's (scripts/build-if-stale.js).
    expect(r.stderr).toContain("dist/ was built from these sources; not compiling");
    expect(r.status).toBe(0);
  });

  it("runs `npm run build` when dist/ is missing, and passes its exit code on", () => {
    const pkg = path.join(dir, "pkg");
    fs.mkdirSync(path.join(pkg, "scripts"), { recursive: true });
    fs.copyFileSync(SCRIPT, path.join(pkg, "scripts", "build-if-stale.js"));
    fs.cpSync(path.join(repo, "src", "index.ts"), path.join(pkg, "src", "index.ts"));
    fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ scripts: { build: "exit 7" } }));
    const r = spawnSync(process.execPath, ["scripts/build-if-stale.js"], { cwd: pkg, encoding: "utf8" });
    expect(r.stderr).toContain("compiling TypeScript (dist/ is not built)");
    expect(r.status).toBe(7);
  });
});
