/**
 * eslint.config.mjs's type-aware rules reach the code: a promise nobody waits for, planted in a file
 * under src/, is an error of `npm run lint`; the same code awaiting it is clean.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";

const repoRoot = path.resolve(__dirname, "../..");

// ESLint's Node API, in a node of its own: inside jest, ESLint's import() of eslint.config.mjs never
// settles (jest's module system runs no ES modules without --experimental-vm-modules).
// The planted file is not on disk, so it is outside tsconfig.json's program: typescript-eslint gives it
// a default project of its own (one file and the lib, a few seconds) instead of the repository's.
const lintInChild = `
const { ESLint } = require("eslint");
const planted = "src/planted-floating-promise.ts";
const eslint = new ESLint({
  cwd: process.cwd(),
  overrideConfig: { languageOptions: { parserOptions: { projectService: { allowDefaultProject: [planted] } } } },
});
(async () => {
  const found = [];
  for (const body of JSON.parse(process.argv[1])) {
    const code = "async function save(): Promise<void> {}\\nexport async function reconcile(): Promise<void> {\\n  " + body + "\\n}\\n";
    const results = await eslint.lintText(code, { filePath: planted });
    found.push(results.flatMap((r) => r.messages.map((m) => m.ruleId + ": " + m.message)));
  }
  process.stdout.write(JSON.stringify(found));
})();
`;

function lint(...bodies: string[]): string[][] {
  const out = execFileSync(process.execPath, ["-e", lintInChild, JSON.stringify(bodies)], {
    cwd: repoRoot,
    encoding: "utf8",
    timeout: 60_000,
  });
  return JSON.parse(out) as string[][];
}

test("a floating promise under src/ is a no-floating-promises error; the same call awaited is clean", () => {
  const [floating, awaited] = lint("save();", "await save();");
  expect(floating).toEqual([
    expect.stringMatching(/^@typescript-eslint\/no-floating-promises: Promises must be awaited/),
  ]);
  expect(awaited).toEqual([]);
});
