/**
 * test/env/sources.sh's unpack_snapshot: a tree unpacked before from the pinned snapshot is used
 * without the snapshots (a clone with no ../shared/sources beside it and a warm cache: the cluster
 * tier's chart once failed there while every cached Go build passed); anything else still needs the
 * snapshot with the pinned hash, and says so.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

const REPO = path.resolve(__dirname, "..", "..");
const FILE = "topolvm-chart-v17.1.0.tar.gz";
const PINNED = fs
  .readFileSync(path.join(REPO, "test/env/sources.sha256"), "utf8")
  .split("\n")
  .map((l) => l.trim().split(/\s+/))
  .find(([, f]) => f === FILE)![0]!;

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "sources-sh-"));
});
afterEach(() => fs.rmSync(tmp, { recursive: true, force: true }));

function unpack(dest: string, sources: string) {
  const r = spawnSync(
    "bash",
    ["-c", 'source test/env/sources.sh && unpack_snapshot "$1" "$2"', "-", FILE, dest],
    {
      cwd: REPO,
      encoding: "utf8",
      env: { ...process.env, PULUMI_LVM_SOURCES: sources },
    },
  );
  return { status: r.status, stdout: r.stdout.trim(), stderr: r.stderr.trim() };
}

/** A tree as unpack_snapshot leaves it, stamped with `hash`. */
function unpacked(dest: string, hash: string): string {
  const top = path.join(dest, FILE.replace(/\.tar\.gz$/, ""));
  fs.mkdirSync(path.join(top, "charts"), { recursive: true });
  fs.writeFileSync(path.join(dest, `.${FILE}.sha256`), `${hash}\n`);
  return top;
}

it("uses a tree unpacked from the pinned snapshot without the snapshots", () => {
  const dest = path.join(tmp, "cache");
  const top = unpacked(dest, PINNED);
  expect(unpack(dest, path.join(tmp, "no-such-dir"))).toEqual({ status: 0, stdout: top, stderr: "" });
});

it("does not use a tree stamped with another hash: it needs the snapshots, and says where it looked", () => {
  const dest = path.join(tmp, "cache");
  unpacked(dest, "0".repeat(64));
  const r = unpack(dest, path.join(tmp, "no-such-dir"));
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain(`no source snapshots at ${path.join(tmp, "no-such-dir")}`);
});

it("refuses a snapshot whose hash is not the pinned one, and unpacks nothing", () => {
  const sources = path.join(tmp, "sources");
  fs.mkdirSync(sources);
  fs.writeFileSync(path.join(sources, FILE), "not the chart");
  const dest = path.join(tmp, "cache");
  const r = unpack(dest, sources);
  expect(r.status).not.toBe(0);
  expect(r.stderr).toContain(`test/env/sources.sha256 pins ${PINNED}: refusing it`);
  expect(fs.existsSync(dest)).toBe(false);
});
