#!/usr/bin/env node
// Fails when `npm install` changed package-lock.json in a way that matters on this machine.
//
// Why not `git diff --exit-code package-lock.json`: the registry mirror here lists other platforms'
// optional binaries on some days and 404s them on others (e.g. @unrs/resolver-binding-darwin-x64:
// refused on 2026-11-23, served on 2026-11-26). npm then adds or drops those lock entries, which a
// clean clone would report as an out-of-date lock although nothing installed here changed. Entries
// that are optional *and* for another os/cpu are never installed on this machine, so they are left
// out of the comparison; every other entry (version, integrity, dependencies) must be identical.
"use strict";
const { execFileSync } = require("node:child_process");
const { readFileSync } = require("node:fs");

const committed = JSON.parse(execFileSync("git", ["show", "HEAD:package-lock.json"], { encoding: "utf8" }));
const installed = JSON.parse(readFileSync("package-lock.json", "utf8"));

const foreignOptional = (entry) => {
  if (!entry || !entry.optional) return false;
  const os = entry.os ?? [];
  const cpu = entry.cpu ?? [];
  const otherOs = os.length > 0 && !os.includes(process.platform);
  const otherCpu = cpu.length > 0 && !cpu.includes(process.arch);
  return otherOs || otherCpu;
};
const relevant = (lock) => {
  const out = {};
  for (const [path, entry] of Object.entries(lock.packages ?? {})) {
    if (!foreignOptional(entry)) out[path] = JSON.stringify(entry);
  }
  return out;
};

const a = relevant(committed);
const b = relevant(installed);
const problems = [];
for (const path of new Set([...Object.keys(a), ...Object.keys(b)])) {
  if (!(path in a)) problems.push(`added by npm install: ${path || "(root)"}`);
  else if (!(path in b)) problems.push(`removed by npm install: ${path || "(root)"}`);
  else if (a[path] !== b[path]) problems.push(`changed by npm install: ${path || "(root)"}`);
}
if (problems.length > 0) {
  console.error("package-lock.json is out of date: run npm install and commit it");
  for (const p of problems) console.error(`  ${p}`);
  process.exit(1);
}
const ignored = Object.keys(installed.packages ?? {}).length - Object.keys(b).length;
console.log(
  `package-lock.json matches (${Object.keys(b).length} entries; ${ignored} other-platform optional entries not compared)`,
);
