// Prints jest's result as one plain closing line ("tests: N passed, N failed, N skipped") and fails
// when no test ran at all: a green run that tested nothing is not green.
const fs = require("fs");
const file = process.argv[2];
let r;
try {
  r = JSON.parse(fs.readFileSync(file, "utf8"));
} catch (e) {
  console.error(`no jest report at ${file}: ${e.message}`);
  process.exit(1);
}
const failedSuites = r.testResults.filter((s) => s.status === "failed");
for (const s of failedSuites) console.error(`FAILED SUITE ${s.name}\n${(s.message || "").slice(0, 2000)}`);
console.log(`tests: ${r.numPassedTests} passed, ${r.numFailedTests} failed, ${r.numPendingTests} skipped`);
if (r.numTotalTests === 0) {
  console.error("no test ran");
  process.exit(1);
}
process.exit(
  r.numFailedTests === 0 && r.numRuntimeErrorTestSuites === 0 && failedSuites.length === 0 ? 0 : 1,
);
