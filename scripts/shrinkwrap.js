#!/usr/bin/env node
/**
 * The published lockfile: `npm pack`/`npm publish` run this as `prepack` (writes
 * npm-shrinkwrap.json from package-lock.json) and `postpack` (`--remove`: deletes it again).
 *
 * Why: `pulumi package add ./node_modules/pulumi-lvm` (the package as a component provider,
 * docs/languages.md) runs `npm install` inside the installed package, on the deployer's machine.
 * npm never publishes package-lock.json, so without a lockfile that install resolved every
 * dependency, development ones included, from its `^` range: whatever the registry served that day.
 * npm-shrinkwrap.json is the lockfile npm does publish and honours there: the same versions and
 * integrity hashes as this repository's package-lock.json. In a program that installs pulumi-lvm as a
 * dependency, npm skips its development entries (no second @pulumi/pulumi: test/package).
 *
 * Only while packing: with both files in a checkout, npm would use the shrinkwrap and leave
 * package-lock.json behind.
 *
 * Plain JavaScript without dependencies: it runs before anything is compiled.
 */
"use strict";
const fs = require("node:fs");
const path = require("node:path");

/** npm-shrinkwrap.json's text for the package at `root`: its package-lock.json, which npm reads the same way. */
function shrinkwrapText(root) {
  const lock = JSON.parse(fs.readFileSync(path.join(root, "package-lock.json"), "utf8"));
  if (lock.lockfileVersion < 2) throw new Error("package-lock.json: lockfileVersion 2 or 3 needed");
  return JSON.stringify(lock, null, 2) + "\n";
}

module.exports = { shrinkwrapText };

if (require.main === module) {
  const root = path.resolve(__dirname, "..");
  const file = path.join(root, "npm-shrinkwrap.json");
  if (process.argv[2] === "--remove") fs.rmSync(file, { force: true });
  else fs.writeFileSync(file, shrinkwrapText(root));
}
