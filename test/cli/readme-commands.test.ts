/**
 * The README's first two commands are a newcomer's first steps and CI's (.ci/run runs both): the
 * main job on the built-in sample, then the tests. They stay the first commands of the README's
 * first code block, and .ci/run runs exactly them.
 */
import * as fs from "node:fs";
import * as path from "node:path";

const repo = path.resolve(__dirname, "..", "..");

/** The commands of the README's first ```bash block: its lines that are not comments. */
function firstCommands(): string[] {
  const readme = fs.readFileSync(path.join(repo, "README.md"), "utf8");
  const block = /```bash\n([\s\S]*?)```/.exec(readme);
  if (!block) throw new Error("README.md has no ```bash block");
  return block[1]!
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith("#"));
}

test("the README opens with the plan on the sample, then the tests", () => {
  const [main, tests, ...rest] = firstCommands();
  expect(main).toMatch(
    /^npm install && npx pulumi-lvm plan --inventory examples\/\S+ --nodeset examples\/\S+$/,
  );
  expect(tests).toBe("npm test");
  expect(rest).toEqual([]);
});

test(".ci/run runs those two commands", () => {
  const ci = fs.readFileSync(path.join(repo, ".ci", "run"), "utf8");
  const [main] = firstCommands();
  // .ci/run does the `npm install` itself (with its own flags), then the plan as the README writes it.
  expect(ci).toContain(main!.replace(/^npm install && /, ""));
  expect(ci).toMatch(/^PULUMI_LVM_TEST_REPORTS=.+ npm test \|\| status=\$\?$/m);
  for (const file of [/--inventory (\S+)/, /--nodeset (\S+)/].map((re) => re.exec(main!)![1]!))
    expect(fs.existsSync(path.join(repo, file))).toBe(true);
});
