/* eslint-disable @typescript-eslint/no-require-imports -- this code runs in the engine's provider process, where it must require at call time */
import type * as pulumi from "@pulumi/pulumi";

/**
 * The NodeSetDisks dynamic provider, kept thin (contributing.md, style 8). Pulumi serializes this
 * object's code into every resource's state and runs that copy later, including after the package
 * was upgraded (a delete always runs the provider the resource was created with). So it holds
 * nothing but the runtime version it speaks and the code that finds that runtime module at call
 * time; all logic lives in provider/runtime/<version>/. A new behaviour gets a new version (v2/)
 * and v1 stays in the package, so a state written by v1 keeps working.
 */

// Not exported: an exported constant compiles to `exports.X`, and the serializer would capture the
// whole module instead of one string.
const VERSION = "v1";

/** The runtime version new resources are written with. */
export const RUNTIME_VERSION = VERSION;

export const nodeSetDisksProvider: pulumi.dynamic.ResourceProvider = {
  check: (olds, news) => runtime(VERSION).check!(olds, news),
  diff: (id, olds, news) => runtime(VERSION).diff!(id, olds, news),
  create: (inputs) => runtime(VERSION).create(inputs),
  update: (id, olds, news) => runtime(VERSION).update!(id, olds, news),
  read: (id, props) => runtime(VERSION).read!(id, props),
  delete: (id, props) => runtime(VERSION).delete!(id, props),
};

/**
 * Loads provider/runtime/<version> of the pulumi-lvm package the program uses: the installed
 * package (node_modules, as resolved from the program's directory), else the checkout the program
 * runs in (a directory above it whose package.json is pulumi-lvm). In a checkout the TypeScript
 * source is loaded with tsx when it is installed; otherwise the compiled dist/ module is used. An
 * installed package (a path through node_modules) always runs its compiled dist/: never its
 * TypeScript sources through whichever tsx resolves from there (docs/languages.md).
 * Everything is required inside the function: it runs in the engine's dynamic-provider process.
 */
function runtime(version: string): pulumi.dynamic.ResourceProvider {
  const cache = ((globalThis as Record<string, unknown>).__pulumiLvmRuntimes ??= {}) as Record<
    string,
    pulumi.dynamic.ResourceProvider
  >;
  if (cache[version]) return cache[version]!;
  const fs = require("fs") as typeof import("fs");
  const path = require("path") as typeof import("path");
  const roots: string[] = [];
  try {
    roots.push(path.dirname(require.resolve("pulumi-lvm/package.json", { paths: [process.cwd()] })));
  } catch {
    // not installed as a package; look for a checkout below
  }
  for (let dir = process.cwd(); path.dirname(dir) !== dir; dir = path.dirname(dir)) {
    const pkg = path.join(dir, "package.json");
    if (fs.existsSync(pkg) && JSON.parse(fs.readFileSync(pkg, "utf8")).name === "pulumi-lvm") roots.push(dir);
  }
  const tried: string[] = [];
  for (const root of roots) {
    const source = path.join(root, "provider", "runtime", version, "index.ts");
    const compiled = path.join(root, "dist", "provider", "runtime", version, "index.js");
    let loaded: { createProvider(): pulumi.dynamic.ResourceProvider } | undefined;
    const installed = root.split(path.sep).includes("node_modules");
    if (!installed && fs.existsSync(source)) {
      try {
        // A global hook, not tsx's namespaced require: this process exists only to run the provider.
        require(require.resolve("tsx/cjs/api", { paths: [root] })).register();
        loaded = require(source);
      } catch (e) {
        tried.push(`${source} (${(e as Error).message.split("\n")[0]})`);
      }
    }
    if (!loaded && fs.existsSync(compiled)) loaded = require(compiled);
    if (loaded) return (cache[version] = loaded.createProvider());
    tried.push(compiled);
  }
  throw new Error(
    `pulumi-lvm: cannot load the ${version} provider runtime (from ${process.cwd()}); tried: ${tried.join(", ") || "no pulumi-lvm package found"}. ` +
      "Install pulumi-lvm in the program's directory, or build it (npm run build).",
  );
}
