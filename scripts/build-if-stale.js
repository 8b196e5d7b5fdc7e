#!/usr/bin/env node
/**
 * The package's `prepare` script: compiles the TypeScript (`npm run build`) unless dist/ already
 * holds a compiled module, at least as new as its source, for every shipped source of src/ and
 * provider/ (and tsconfig.json is no newer than the oldest of them).
 *
 * Why: npm runs `prepare` on every `npm install` in the package's own directory. A clone needs the
 * build (no dist/, or sources changed since). But `pulumi package add ./node_modules/pulumi-lvm` (a
 * component provider, docs/languages.md) also runs `npm install` inside the installed package,
 * which ships dist/ already: compiling there again costs minutes and needs the dev dependencies.
 * An npm tarball gives every file the same mtime, so a published package's dist/ counts as current.
 *
 * Plain JavaScript without dependencies: it runs before anything is compiled. test/pulumi/
 * component-package.ts uses staleSources() to refuse running the engine tests on an old dist/.
 */
"use strict";
const { spawnSync } = require("node:child_process");
const fs = require("node:fs");
const path = require("node:path");

/** The sources under src/ and provider/ whose dist/ module is missing or older (paths relative to `root`). */
function staleSources(root) {
  const stale = [];
  const tsconfig = path.join(root, "tsconfig.json");
  const configTime = fs.existsSync(tsconfig) ? fs.statSync(tsconfig).mtimeMs : 0;
  for (const top of ["src", "provider"]) {
    const dir = path.join(root, top);
    if (!fs.existsSync(dir)) continue;
    for (const e of fs.readdirSync(dir, { recursive: true, withFileTypes: true })) {
      if (!e.isFile() || !e.name.endsWith(".ts") || e.name.endsWith(".test.ts") || e.name.endsWith(".d.ts"))
        continue;
      const source = path.join(e.parentPath, e.name);
      const rel = path.relative(root, source);
      const compiled = path.join(root, "dist", rel.replace(/\.ts$/, ".js"));
      if (!fs.existsSync(compiled)) {
        stale.push(rel);
        continue;
      }
      const built = fs.statSync(compiled).mtimeMs;
      if (built < fs.statSync(source).mtimeMs || built < configTime) stale.push(rel);
    }
  }
  return stale;
}

module.exports = { staleSources };

if (require.main === module) {
  const root = path.resolve(__dirname, "..");
  const stale = staleSources(root);
  if (stale.length === 0 && fs.existsSync(path.join(root, "dist", "src", "index.js"))) {
    console.log("pulumi-lvm: dist/ is current (every module at least as new as its source); not compiling");
    process.exit(0);
  }
  console.log(
    `pulumi-lvm: compiling TypeScript (${stale.length} source file(s) newer than dist/ or not built)`,
  );
  const npm = process.env.npm_execpath
    ? [process.execPath, [process.env.npm_execpath, "run", "build"]]
    : ["npm", ["run", "build"]];
  const r = spawnSync(npm[0], npm[1], { cwd: root, stdio: "inherit" });
  if (r.error) throw r.error;
  process.exit(r.status ?? 1);
}
