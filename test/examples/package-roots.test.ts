import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";

/**
 * Each example is its own Node.js package root. @pulumi/pulumi's run step takes the nearest
 * package.json above the program's directory as the program's package and runs its `main`: without
 * a package.json of its own, an example would be run as the library (the repository's
 * dist/src/index.js), and `pulumi up` would "succeed" with no resources. test/examples/
 * pulumi-engine.test.ts shows the real engine running each example's index.ts; this is the fast
 * guard.
 */
const repo = path.resolve(__dirname, "../..");
/** The Node.js examples (examples/python-quickstart is a Python program: docs/languages.md). */
const examples = fs
  .readdirSync(path.join(repo, "examples"), { withFileTypes: true })
  .filter(
    (e) => e.isDirectory() && runtimeOf(path.join(repo, "examples", e.name, "Pulumi.yaml")) === "nodejs",
  )
  .map((e) => path.join("examples", e.name));

function runtimeOf(projectFile: string): string | undefined {
  if (!fs.existsSync(projectFile)) return undefined;
  const runtime = (YAML.parse(fs.readFileSync(projectFile, "utf8")) as { runtime: string | { name: string } })
    .runtime;
  return typeof runtime === "string" ? runtime : runtime.name;
}

/** The directory of the nearest package.json at or above `dir` (what @pulumi/pulumi's run step uses). */
function packageRoot(dir: string): string {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, "package.json"))) return d;
    if (path.dirname(d) === d) throw new Error(`no package.json above ${dir}`);
  }
}

/** The program directory a Pulumi.yaml runs: its `main` (resolved against the file), or its directory. */
function programOf(projectFile: string): string {
  const project = YAML.parse(fs.readFileSync(projectFile, "utf8")) as { main?: string };
  return path.resolve(path.dirname(projectFile), project.main ?? ".");
}

it("finds the examples", () => {
  expect(examples).toEqual(
    expect.arrayContaining(["examples/quickstart", "examples/multi-nodeset", "examples/org-component"]),
  );
  expect(examples).not.toContain("examples/python-quickstart");
});

describe.each(examples)("%s", (dir) => {
  const abs = path.join(repo, dir);

  it("is its own package root, whose main is its index.ts", () => {
    expect(path.relative(repo, packageRoot(abs))).toBe(dir);
    const pkg = JSON.parse(fs.readFileSync(path.join(abs, "package.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(typeof pkg.main).toBe("string");
    expect(path.resolve(abs, pkg.main as string)).toBe(path.join(abs, "index.ts"));
    expect(fs.existsSync(path.join(abs, "index.ts"))).toBe(true);
    expect(pkg.private).toBe(true);
  });

  it("imports pulumi-lvm by name, never the repository's sources, and lists what a copy needs", () => {
    for (const file of fs.readdirSync(abs).filter((f) => f.endsWith(".ts"))) {
      const text = fs.readFileSync(path.join(abs, file), "utf8");
      expect([file, /from "\.\.\/\.\.\//.test(text)]).toEqual([file, false]);
    }
    expect(fs.readFileSync(path.join(abs, "index.ts"), "utf8")).toMatch(/from "pulumi-lvm";/);
    const pkg = JSON.parse(fs.readFileSync(path.join(abs, "package.json"), "utf8")) as {
      dependencies: Record<string, string>;
    };
    const root = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as {
      version: string;
      peerDependencies: Record<string, string>;
    };
    // A copied example installs this release and the SDKs pulumi-lvm is tested with (its peers).
    expect(pkg.dependencies["pulumi-lvm"]).toBe(`^${root.version}`);
    for (const [name, range] of Object.entries(pkg.dependencies))
      if (name !== "pulumi-lvm") expect([name, range]).toEqual([name, root.peerDependencies[name]]);
    // Its tsconfig.json stands alone (a copy has no ../../tsconfig.json).
    const tsconfig = JSON.parse(fs.readFileSync(path.join(abs, "tsconfig.json"), "utf8")) as Record<
      string,
      unknown
    >;
    expect(tsconfig.extends).toBeUndefined();
  });

  it("in this repository, takes pulumi-lvm from the checkout and the rest from the root's node_modules (no install, no lock file of its own)", () => {
    expect(fs.realpathSync(path.join(repo, "examples", "node_modules", "pulumi-lvm"))).toBe(
      fs.realpathSync(repo),
    );
    expect(fs.existsSync(path.join(abs, "node_modules"))).toBe(false);
    expect(fs.existsSync(path.join(abs, "package-lock.json"))).toBe(false);
  });

  it("its Pulumi.yaml runs this directory", () => {
    expect(programOf(path.join(abs, "Pulumi.yaml"))).toBe(abs);
  });
});

it("the root Pulumi.yaml runs examples/quickstart, which is its own package root", () => {
  const program = programOf(path.join(repo, "Pulumi.yaml"));
  expect(path.relative(repo, program)).toBe("examples/quickstart");
  expect(packageRoot(program)).toBe(program);
});

it("the root package.json declares no workspaces, so npm install at the root ignores the examples' package.json files", () => {
  const root = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as Record<
    string,
    unknown
  >;
  expect(root.workspaces).toBeUndefined();
  expect(root.files).not.toEqual(expect.arrayContaining([expect.stringMatching(/^examples/)]));
});
