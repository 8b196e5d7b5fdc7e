/**
 * The package as a consumer in another language gets it (test/pulumi/component-provider.test.ts):
 * what `npm pack` publishes, installed into a project's node_modules with its production
 * dependencies, as `npm install pulumi-lvm` lays them out; and the Python wheels install.sh keeps.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { ComponentProvider, getPulumiComponents } from "@pulumi/pulumi/provider/experimental/provider";
import { staleReason } from "../../scripts/build-if-stale";

/**
 * `npm pack` of the checkout into `dest`, as `npm publish` packs it: with its pack scripts (prepack
 * writes npm-shrinkwrap.json, postpack removes it; prepare does not compile a current dist/, see
 * requireFreshBuild). Returns the tarball's path and the files it holds.
 */
export function packPackage(repo: string, dest: string): { tarball: string; files: string[] } {
  const out = execFileSync("npm", ["pack", "--json", "--pack-destination", dest], {
    cwd: repo,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  // The whole of stdout is the report: the pack scripts write to stderr (test/package/pack-json.test.ts).
  const packed = JSON.parse(out) as Array<{
    filename: string;
    files: Array<{ path: string }>;
  }>;
  return { tarball: path.join(dest, packed[0]!.filename), files: packed[0]!.files.map((f) => f.path) };
}

/**
 * The package packed (packPackage) and unpacked to `<projectDir>/node_modules/pulumi-lvm`, and each
 * production dependency of the package (the hoisted closure `npm ls --omit=dev` lists) linked
 * beside it from the checkout's node_modules. Development dependencies (tsx, typescript, jest) are
 * not there, as in a real install.
 */
export function installPackedPackage(repo: string, projectDir: string): void {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-pack-"));
  try {
    const { tarball } = packPackage(repo, tmp);
    const target = path.join(projectDir, "node_modules", "pulumi-lvm");
    fs.mkdirSync(target, { recursive: true });
    execFileSync("tar", ["-xzf", tarball, "-C", target, "--strip-components=1"]);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
  const modules = path.join(repo, "node_modules");
  const listed = execFileSync("npm", ["ls", "--omit=dev", "--all", "--parseable"], {
    cwd: repo,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
  for (const dir of listed.split("\n")) {
    const rel = path.relative(modules, dir);
    // Top-level entries only (name or @scope/name): nested ones come along inside them.
    if (!rel || rel.startsWith("..") || rel.split(path.sep).length > (rel.startsWith("@") ? 2 : 1)) continue;
    const link = path.join(projectDir, "node_modules", rel);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    if (!fs.existsSync(link)) fs.symlinkSync(dir, link, "dir");
  }
  // The peer dependencies (@pulumi/pulumi, @pulumi/kubernetes), which `npm install pulumi-lvm`
  // installs beside it (npm >= 7) and `npm ls --omit=dev` leaves out here, where they are dev
  // dependencies too. Top level is enough: a symlinked package resolves its own dependencies
  // from its real path.
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as {
    peerDependencies?: Record<string, string>;
  };
  for (const name of Object.keys(pkg.peerDependencies ?? {})) {
    const link = path.join(projectDir, "node_modules", name);
    fs.mkdirSync(path.dirname(link), { recursive: true });
    if (!fs.existsSync(link)) fs.symlinkSync(path.join(modules, name), link, "dir");
  }
}

/** Environment for pip that never reaches an index: the wheels install.sh downloaded only. */
export const offlinePip = (wheels: string): Record<string, string> => ({
  PIP_NO_INDEX: "1",
  PIP_FIND_LINKS: wheels,
  PIP_DISABLE_PIP_VERSION_CHECK: "1",
});

/** `<projectDir>/venv` with the project's requirements.txt (pulumi==<CLI version>) from `wheels`, offline. */
export function createVirtualenv(projectDir: string, wheels: string): void {
  execFileSync("python3", ["-m", "venv", path.join(projectDir, "venv")], { stdio: "inherit" });
  execFileSync(
    path.join(projectDir, "venv", "bin", "pip"),
    [
      "install",
      "--quiet",
      "--no-index",
      "--find-links",
      wheels,
      "-r",
      path.join(projectDir, "requirements.txt"),
    ],
    { stdio: "inherit" },
  );
}

/** Throws unless dist/ was built from exactly the sources here (scripts/build-if-stale.js). */
export function requireFreshBuild(repo: string): void {
  const reason = staleReason(repo);
  if (reason)
    throw new Error(
      `${reason}: run \`npm run build\` (the component provider runs the compiled package, as published)`,
    );
}

/** The wheels of pulumi==<CLI version> that test/pulumi/install.sh downloads; throws when missing. */
export function pythonWheelsDir(binDir: string): string {
  const dir = path.join(binDir, "..", "python-wheels");
  if (!fs.existsSync(path.join(dir, ".complete")))
    throw new Error(`the Python wheels are missing (${dir}): run bash test/pulumi/install.sh`);
  return dir;
}

/**
 * The schema the component provider serves, computed in this process as the Node.js host's plugin
 * runner computes it (@pulumi/pulumi's cmd/run-plugin): the components the package's exports hold
 * (`getPulumiComponents`), a `ComponentProvider` named after package.json's name, its getSchema()
 * (Pulumi's analyzer over the TypeScript sources). Without the engine: `pulumi package get-schema`
 * installs the package's required plugins (pulumi-resource-kubernetes) before it asks the plugin.
 */
export async function inferSchema(repo: string, packageExports: unknown): Promise<string> {
  const pkg = JSON.parse(fs.readFileSync(path.join(repo, "package.json"), "utf8")) as { name: string };
  const components = getPulumiComponents(packageExports);
  return new ComponentProvider({ name: pkg.name, dirname: repo, components }).getSchema();
}
