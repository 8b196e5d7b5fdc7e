import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { RULES_FILE } from "./alert-rules";

/**
 * The alert and recording rules, run by Prometheus's own promtool on fixture series
 * (test/fixtures/monitoring/pulumi-lvm-rules.test.yaml): each alert fires when it should, after its
 * `for`, with its labels and text, and not otherwise. promtool comes from Debian's prometheus package
 * (test/setup.sh installs it); without it this fails, never skips.
 */

const ROOT = path.resolve(__dirname, "../..");
const FIXTURE = path.join(ROOT, "test/fixtures/monitoring/pulumi-lvm-rules.test.yaml");

function promtool(args: string[], cwd = ROOT) {
  const r = spawnSync("promtool", args, { cwd, encoding: "utf8", timeout: 60_000 });
  if (r.error)
    throw new Error(
      `promtool ${args.join(" ")}: ${r.error.message} — install it with test/setup.sh (Debian's prometheus package)`,
    );
  return { code: r.status, out: `${r.stdout}${r.stderr}` };
}

test("promtool is installed", () => {
  expect(execFileSync("promtool", ["--version"], { encoding: "utf8" })).toMatch(/^promtool, version \d/);
});

test("promtool check rules: the generated rule file is valid", () => {
  const r = promtool(["check", "rules", RULES_FILE]);
  expect(r).toEqual({ code: 0, out: expect.stringContaining("SUCCESS: 14 rules found") });
});

test("promtool test rules: every alert on its fixture series", () => {
  const r = promtool(["test", "rules", FIXTURE]);
  expect(r).toEqual({ code: 0, out: expect.stringContaining("SUCCESS") });
});

test("the fixtures can fail: the same tests over rules with a critical threshold of 95% do", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-rules-"));
  try {
    const rules = fs.readFileSync(path.join(ROOT, RULES_FILE), "utf8").replace(">= 0.85", ">= 0.95");
    fs.mkdirSync(path.join(dir, "deploy/monitoring"), { recursive: true });
    fs.mkdirSync(path.join(dir, "test/fixtures/monitoring"), { recursive: true });
    fs.writeFileSync(path.join(dir, RULES_FILE), rules);
    fs.copyFileSync(FIXTURE, path.join(dir, "test/fixtures/monitoring", path.basename(FIXTURE)));
    const r = promtool(["test", "rules", path.join("test/fixtures/monitoring", path.basename(FIXTURE))], dir);
    expect(r.code).toBe(1);
    expect(r.out).toContain("alertname: LvmThinPoolDataCritical");
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
