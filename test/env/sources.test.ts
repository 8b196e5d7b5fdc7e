/**
 * test/env/sources.sh's unpack_snapshot: a tree unpacked before from the pinned snapshot is used
 * without the snapshots (a clone with no ../shared/sources beside it and a warm cache: the cluster
 * tier's chart once failed there while every cached Go build passed); anything else still needs the
 * snapshot with the pinned hash, and says so; callers at once on a cold cache share one unpack (the
 * cluster tier and the Kubernetes tier both read TopoLVM's chart).
 */
import { spawn, spawnSync } from "node:child_process";
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

/**
 * The real script, copied beside a pin file of the test's own (sources.sh reads the pins next to
 * itself), and a snapshot of many small files, so that unpacking takes a while.
 */
function fakeSnapshot(): { script: string; sources: string; file: string; files: number } {
  const here = path.join(tmp, "env");
  fs.mkdirSync(here);
  fs.copyFileSync(path.join(REPO, "test/env/sources.sh"), path.join(here, "sources.sh"));
  const tree = path.join(tmp, "tree", "fake-v1");
  const files = 3000;
  for (let d = 0; d < 30; d++) {
    fs.mkdirSync(path.join(tree, `d${d}`), { recursive: true });
    for (let f = 0; f < files / 30; f++)
      fs.writeFileSync(path.join(tree, `d${d}`, `f${f}`), `${d}/${f}\n`.repeat(50));
  }
  const sources = path.join(tmp, "sources");
  fs.mkdirSync(sources);
  const file = "fake-v1.tar.gz";
  const tar = spawnSync("tar", ["-czf", path.join(sources, file), "-C", path.join(tmp, "tree"), "fake-v1"]);
  expect(tar.status).toBe(0);
  const sum = spawnSync("sha256sum", [path.join(sources, file)], { encoding: "utf8" }).stdout.split(" ")[0];
  fs.writeFileSync(path.join(here, "sources.sha256"), `${sum}  ${file}\n`);
  return { script: path.join(here, "sources.sh"), sources, file, files };
}

it("four callers at once on a cold cache: one unpacks, all get the whole tree", async () => {
  const { script, sources, file, files } = fakeSnapshot();
  const dest = path.join(tmp, "cache");
  const run = () =>
    new Promise<{ code: number | null; out: string; err: string }>((resolve) => {
      const p = spawn("bash", ["-c", 'source "$1" && unpack_snapshot "$2" "$3"', "-", script, file, dest], {
        env: { ...process.env, PULUMI_LVM_SOURCES: sources },
      });
      let out = "";
      let err = "";
      p.stdout.on("data", (d: Buffer) => (out += d.toString()));
      p.stderr.on("data", (d: Buffer) => (err += d.toString()));
      p.on("close", (code) => resolve({ code, out: out.trim(), err: err.trim() }));
    });
  const runs = await Promise.all([run(), run(), run(), run()]);
  const top = path.join(dest, "fake-v1");
  expect(runs).toEqual(Array(4).fill({ code: 0, out: top, err: "" }));
  const count = spawnSync("bash", ["-c", 'find "$1" -type f | wc -l', "-", top], { encoding: "utf8" });
  expect(Number(count.stdout.trim())).toBe(files);
});
