/**
 * `pulumi-lvm inventory` as a real process, where it must refuse before reading anything: as a user
 * other than root (the suite drops to nobody when it runs as root), and with a bad command line.
 * No devices are needed.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

const ROOT = path.join(__dirname, "..", "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const MAIN = path.join(ROOT, "src", "cli", "main.ts");
/** nobody, on Debian and most others */
const NOBODY = 65534;

jest.setTimeout(60_000);

function cli(args: string[], uid?: number) {
  if (!fs.existsSync(TSX)) throw new Error(`${TSX} is missing: run npm ci`);
  const r = spawnSync(TSX, [MAIN, ...args], {
    cwd: ROOT,
    encoding: "utf8",
    timeout: 50_000,
    // tsx keeps its cache per user under the temporary directory
    ...(uid !== undefined ? { uid, gid: uid, env: { ...process.env, HOME: "/tmp" } } : {}),
  });
  if (r.error) throw r.error;
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("not as root: exit 1, our words, nothing on stdout, no command run", () => {
  const r = cli(["inventory", "--node", "edge-1"], process.geteuid?.() === 0 ? NOBODY : undefined);
  expect(r).toEqual({
    code: 1,
    stdout: "",
    stderr:
      'pulumi-lvm inventory: node "edge-1": reading every block device (nothing is written)\n' +
      "pulumi-lvm inventory: run as root (it reads block devices)\n",
  });
});

test("a usage error: exit 2", () => {
  const r = cli(["inventory", "-o", "table"]);
  expect(r.code).toBe(2);
  expect(r.stdout).toBe("");
  expect(r.stderr).toContain("pulumi-lvm inventory: -o table: must be one of text, wide, json, yaml\n");
});
