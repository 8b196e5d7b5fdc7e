// Prints jest's results as plain closing lines and fails when a test failed, a report is missing, or
// no test ran at all: a green run that tested nothing is not green.
//   node test/summary.js <report.json>                   one report (a plain `jest --json` run)
//   node test/summary.js <dir> <name> [<name> ...]       <dir>/<name>.json for each name, all required
//                                                        (test/run.sh: one report per tier)
const fs = require("fs");
const path = require("path");

const [target, ...names] = process.argv.slice(2);
const files =
  names.length === 0
    ? [[path.basename(target, ".json"), target]]
    : names.map((n) => [n, path.join(target, `${n}.json`)]);

let ok = true;
const total = { passed: 0, failed: 0, skipped: 0, all: 0 };
for (const [name, file] of files) {
  let r;
  try {
    r = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    console.error(`${name}: no jest report at ${file} (${e.message}): that tier did not run`);
    ok = false;
    continue;
  }
  const failedSuites = r.testResults.filter((s) => s.status === "failed");
  for (const s of failedSuites) console.error(`FAILED SUITE ${s.name}\n${(s.message || "").slice(0, 4000)}`);
  const secs = r.testResults.length
    ? (Math.max(...r.testResults.map((s) => s.endTime)) - r.startTime) / 1000
    : 0;
  console.log(
    `${name}: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped, ` +
      `${r.testResults.length} files, ${secs.toFixed(0)} s`,
  );
  if (r.numTotalTests === 0) {
    console.error(`${name}: no test ran`);
    ok = false;
  }
  if (r.numFailedTests !== 0 || r.numRuntimeErrorTestSuites !== 0 || failedSuites.length !== 0) ok = false;
  total.passed += r.numPassedTests;
  total.failed += r.numFailedTests;
  total.skipped += r.numPendingTests;
  total.all += r.numTotalTests;
}
console.log(`tests: ${total.passed} passed, ${total.failed} failed, ${total.skipped} skipped`);
if (total.all === 0) {
  console.error("no test ran");
  ok = false;
}
process.exit(ok ? 0 : 1);
