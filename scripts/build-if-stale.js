#!/usr/bin/env node
/**
 * The package's `prepare` script: compiles the TypeScript (`npm run build`) unless dist/ was built
 * from exactly the sources that are here. `npm run build` records a digest of them
 * (`--record`: dist/build-stamp.json, published with dist/).
 *
 * Why: npm runs `prepare` on every `npm install` in the package's own directory. A clone needs the
 * build (no dist/, or sources changed since). But `pulumi package add ./node_modules/pulumi-lvm` (a
 * component provider, docs/languages.md) also runs `npm install` inside the installed package,
 * which ships dist/ already: compiling there again costs minutes. A digest of the contents, not
 * file times: npm's extraction gives each file the time it was written, so src/ looks newer than
 * dist/ in every installed copy.
 *
 * Plain JavaScript without dependencies: it runs before anything is compiled. test/pulumi/
 * component-package.ts uses staleReason() to refuse running the engine tests on an old dist/.
 */
"use strict";
const { spawnSync } = require("node:child_process");
const crypto = require("node:crypto");
const fs = require("node:fs");
const path = require("node:path");

const STAMP = path.join("dist", "build-stamp.json");

/**
 * The sources of what the package ships, as package.json's "files" publishes them: src/ and
 * provider/ without tests and test doubles (*.test.ts, testing/, testing.ts), and tsconfig.json.
 * The same list in a clone and in the published package, so the digests compare.
 */
function sourceFiles(root) {
  const files = ["tsconfig.json"];
  for (const top of ["src", "provider"]) {
    const dir = path.join(root, top);
    if (!fs.existsSync(dir)) continue;
    for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true }))
      if (e.isFile() && e.name.endsWith(".ts") && !e.name.endsWith(".test.ts") && e.name !== "testing.ts") {
        const rel = path.relative(root, path.join(e.parentPath, e.name)).split(path.sep).join("/");
        if (!rel.split("/").includes("testing")) files.push(rel);
      }
  }
  return files.sort();
}

/** sha256 over the sources' relative paths and contents. */
function sourceDigest(root) {
  const hash = crypto.createHash("sha256");
  for (const rel of sourceFiles(root)) {
    const file = path.join(root, rel);
    if (!fs.existsSync(file)) continue;
    hash.update(`${rel}\0`).update(fs.readFileSync(file)).update("\0");
  }
  return hash.digest("hex");
}

/** Why dist/ must be rebuilt, or undefined when it was built from exactly these sources. */
function staleReason(root) {
  if (!fs.existsSync(path.join(root, "dist", "src", "index.js"))) return "dist/ is not built";
  let stamp;
  try {
    stamp = JSON.parse(fs.readFileSync(path.join(root, STAMP), "utf8"));
  } catch {
    return `${STAMP} is missing (dist/ not built by npm run build)`;
  }
  const digest = sourceDigest(root);
  if (stamp.sources !== digest) return `the sources changed since dist/ was built (${STAMP})`;
  return undefined;
}

/** Writes the stamp: `npm run build` runs this after tsc. */
function recordBuild(root) {
  fs.writeFileSync(path.join(root, STAMP), JSON.stringify({ sources: sourceDigest(root) }) + "\n");
}

module.exports = { staleReason, recordBuild, sourceDigest };

if (require.main === module) {
  const root = path.resolve(__dirname, "..");
  if (process.argv[2] === "--record") {
    recordBuild(root);
    process.exit(0);
  }
  const reason = staleReason(root);
  if (!reason) {
    console.error("pulumi-lvm: dist/ was built from these sources; not compiling");
    process.exit(0);
  }
  console.error(`pulumi-lvm: compiling TypeScript (${reason})`);
  const npm = process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath, "run", "build"]]
    : ["npm", ["run", "build"]];
  // Everything on stderr: `npm pack --json` (and `npm publish --json`) print their report on stdout
  // after this script has run, and a tool reading that report takes the whole of stdout as JSON.
  const r = spawnSync(npm[0], npm[1], { cwd: root, stdio: ["inherit", process.stderr, "inherit"] });
  if (r.error) throw r.error;
  process.exit(r.status ?? 1);
}
