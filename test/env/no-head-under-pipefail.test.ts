/**
 * `cmd | head` under `set -o pipefail` fails the script whenever `head` exits before `cmd` has
 * written everything: `cmd` dies of SIGPIPE (exit 141) depending on timing and load. A clean clone's
 * CI failed exactly that way (`"$bin/etcd" --version | head -1` in test/env/install.sh). This scans
 * every shell script of CI and test setup for a pipe into head (or into `grep -q`/`grep -m`, which
 * stop reading the same way).
 */
import * as fs from "node:fs";
import * as path from "node:path";

const REPO = path.resolve(__dirname, "..", "..");

function scripts(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "node_modules") out.push(...scripts(p));
    } else if (e.name.endsWith(".sh") || /^#!.*\b(ba)?sh\b/.test(fs.readFileSync(p, "utf8").slice(0, 80)))
      out.push(p);
  }
  return out;
}

describe("shell scripts of CI and test setup", () => {
  const files = [...scripts(path.join(REPO, ".ci")), ...scripts(path.join(REPO, "test"))];

  it("finds the scripts (the scan is not empty)", () => {
    expect(files.map((f) => path.relative(REPO, f))).toEqual(
      expect.arrayContaining([".ci/run", "test/setup.sh", "test/env/install.sh"]),
    );
  });

  it("never pipe into a reader that stops early while pipefail is on", () => {
    const offenders: string[] = [];
    for (const file of files) {
      const text = fs.readFileSync(file, "utf8");
      if (!/pipefail/.test(text)) continue;
      text.split("\n").forEach((line, i) => {
        const code = line.replace(/(^|\s)#.*$/, "");
        if (/\|\s*(head|grep\s+(-\w*[qm]|--quiet|--max-count))\b/.test(code))
          offenders.push(`${path.relative(REPO, file)}:${i + 1}: ${line.trim()}`);
      });
    }
    expect(offenders).toEqual([]);
  });
});
