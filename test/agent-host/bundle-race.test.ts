import { execFileSync, spawn, spawnSync, type ChildProcess } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import {
  BUNDLE_FILE,
  credentialsIdOf,
  installScript,
  releaseScript,
  removeScript,
  type AgentHostScriptInput,
} from "../../src/components/agent-host-script";
import { copyLocally, prepareLocally } from "./local-flow";
import { freePort } from "../net";

/**
 * The local attacker of a bare host against AgentHost's bundle (docs/components.md#agenthost): a
 * second, unprivileged user (nobody) on the host runs race-attacker.js while the copy and the
 * install script run as root, here on this machine, in a temporary directory that is what /tmp is
 * (mode 1777) and every install path under a scratch root. The bundle is a small one made here: its
 * node-forge (the module the install script loads as root) and its agent are stubs; the attacker's
 * tarball is the same with a node-forge that records the uid it ran as. The attacker wins when that
 * record says uid 0, or when its files are in the release root runs.
 *
 * Against the flow before the fix (the bundle copied to /tmp/pulumi-lvm-agent-<hash16>.tgz, unpacked
 * without a check) the attacker won its first race: "uid 0", the install itself exiting 0.
 */
const REAL_FORGE = require.resolve("node-forge");
const NOBODY = 65534;
let scratch: string;
let tmp: string;
let genuine: string;
let evil: string;
let marker: string;
let hash: string;

function makeBundle(file: string, forge: string): void {
  const dir = fs.mkdtempSync(path.join(scratch, "bundle-"));
  const pkg = path.join(dir, "package");
  fs.mkdirSync(path.join(pkg, "dist/src/cli"), { recursive: true });
  fs.mkdirSync(path.join(pkg, "node_modules/node-forge"), { recursive: true });
  fs.writeFileSync(path.join(pkg, "package.json"), JSON.stringify({ name: "pulumi-lvm", version: "0.0.0" }));
  fs.writeFileSync(
    path.join(pkg, "dist/src/cli/main.js"),
    `const fs = require("fs"); const a = process.argv; const v = (f) => a[a.indexOf(f) + 1];
require("https").createServer({ cert: fs.readFileSync(v("--tls-cert")), key: fs.readFileSync(v("--tls-key")) }, (q, r) => r.end("{}"))
  .listen(Number(v("--listen").split(":")[1]), "127.0.0.1");\n`,
  );
  fs.writeFileSync(
    path.join(pkg, "node_modules/node-forge/package.json"),
    JSON.stringify({ main: "index.js" }),
  );
  fs.writeFileSync(path.join(pkg, "node_modules/node-forge/index.js"), forge);
  execFileSync("tar", ["-czf", file, "-C", dir, "package"]);
}

beforeAll(() => {
  if (process.getuid?.() !== 0)
    throw new Error(
      "bundle-race.test.ts runs as root (the install's user) with an attacker as nobody: run it as root, as CI does",
    );
  scratch = fs.mkdtempSync(path.join(os.tmpdir(), "bundle-race-"));
  fs.chmodSync(scratch, 0o755);
  tmp = path.join(scratch, "tmp");
  fs.mkdirSync(tmp);
  fs.chmodSync(tmp, 0o1777);
  marker = path.join(tmp, "attacker-ran-as");
  genuine = path.join(scratch, "genuine.tgz");
  evil = path.join(scratch, "evil.tgz");
  makeBundle(genuine, `module.exports = require(${JSON.stringify(REAL_FORGE)});\n`);
  makeBundle(
    evil,
    `require("fs").appendFileSync(${JSON.stringify(marker)}, "uid " + process.getuid() + "\\n");
module.exports = require(${JSON.stringify(REAL_FORGE)});\n`,
  );
  fs.chmodSync(evil, 0o644);
  fs.copyFileSync(path.join(__dirname, "race-attacker.js"), path.join(scratch, "race-attacker.js"));
  fs.chmodSync(path.join(scratch, "race-attacker.js"), 0o644);
  hash = crypto.createHash("sha256").update(fs.readFileSync(genuine)).digest("hex");
});

afterAll(() => {
  for (const pid of fs.readdirSync(scratch).filter((n) => n.startsWith("root-"))) {
    const pidFile = path.join(scratch, pid, "opt/pulumi-lvm/agent.pid");
    if (fs.existsSync(pidFile))
      spawnSync("sh", ["-c", 'kill -TERM -"$1"', "sh", fs.readFileSync(pidFile, "utf8").trim()]);
  }
  fs.rmSync(scratch, { recursive: true, force: true });
});

interface Attacker {
  readonly child: ChildProcess;
  stop(): Promise<Record<string, unknown>>;
}

/** race-attacker.js as nobody, once it says it is running. */
async function startAttacker(oldPath: string): Promise<Attacker> {
  const child = spawn(
    "setpriv",
    [
      `--reuid=${NOBODY}`,
      `--regid=${NOBODY}`,
      "--clear-groups",
      process.execPath,
      path.join(scratch, "race-attacker.js"),
      tmp,
      oldPath,
      evil,
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  let out = "";
  child.stdout!.on("data", (d) => (out += d));
  await new Promise<void>((resolve, reject) => {
    child.on("exit", (code) => reject(new Error(`the attacker exited ${code}: ${out}`)));
    const wait = () => (out.startsWith("ready") ? resolve() : setTimeout(wait, 10));
    wait();
  });
  return {
    child,
    stop: () =>
      new Promise((resolve) => {
        child.removeAllListeners("exit");
        child.on("exit", () => resolve(JSON.parse(out.split("\n")[1] || "{}")));
        child.kill("SIGTERM");
      }),
  };
}

let roots = 0;
/** A scratch root for the install paths, as / is: root's, 0755. */
function freshRoot(): string {
  const root = path.join(scratch, `root-${roots++}`);
  fs.mkdirSync(root, { mode: 0o755 });
  return root;
}

const inputOf = (root: string, port = 9443): AgentHostScriptInput => ({
  node: "edge-1",
  bundleHash: hash,
  credentialsId: credentialsIdOf(""),
  port,
  certificateNames: ["127.0.0.1"],
  sudo: false,
  nodeMajor: 20,
  root,
});
const releaseOf = (root: string) => path.join(root, "opt/pulumi-lvm/releases", hash);
const forgeOf = (root: string) => path.join(releaseOf(root), "package/node_modules/node-forge/index.js");
const attackerRecord = () => (fs.existsSync(marker) ? fs.readFileSync(marker, "utf8") : "");
const GENUINE_FORGE = () => `module.exports = require(${JSON.stringify(REAL_FORGE)});\n`;
/** The path the old flow copied the bundle to: what an attacker computes in advance. */
const oldPath = () => path.join(tmp, `pulumi-lvm-agent-${hash.slice(0, 16)}.tgz`);

/** The release part of the install script, as root, after the prepare and the copy. */
function runRelease(root: string, dir: string) {
  return spawnSync("sh", ["-c", releaseScript(inputOf(root), dir)], { encoding: "utf8", timeout: 60_000 });
}

test("a whole install while the attacker races it: the genuine release runs, the attacker's code never", async () => {
  const root = freshRoot();
  const port = await freePort();
  const attacker = await startAttacker(oldPath());
  const dir = prepareLocally(tmp);
  copyLocally(dir, genuine);
  const r = spawnSync("sh", ["-c", installScript(inputOf(root, port), `https://127.0.0.1:${port}`, dir)], {
    encoding: "utf8",
    timeout: 120_000,
  });
  const stats = await attacker.stop();
  console.log(
    `whole install: exit ${r.status}; attacker ${JSON.stringify(stats)}; record: ${attackerRecord() || "none"}`,
  );
  const installed = fs.existsSync(forgeOf(root)) ? fs.readFileSync(forgeOf(root), "utf8") : "";
  spawnSync("sh", ["-c", removeScript(inputOf(root, port), dir)]);
  expect(r.stderr).not.toContain("refusing");
  expect(r.status).toBe(0);
  expect(attackerRecord()).toBe("");
  expect(installed).toBe(GENUINE_FORGE());
  expect(fs.existsSync(dir)).toBe(false);
}, 180_000);

test("100 races of the copy and the unpack: the attacker loses every one", async () => {
  const attacker = await startAttacker(oldPath());
  const lost: string[] = [];
  let won = 0;
  const t0 = Date.now();
  for (let i = 0; i < 100; i++) {
    const root = freshRoot();
    const dir = prepareLocally(tmp);
    copyLocally(dir, genuine);
    // The copy and the install are two SSH sessions: the attacker gets that gap too.
    await new Promise((res) => setTimeout(res, 20));
    const r = runRelease(root, dir);
    const genuineRelease = r.status === 0 && fs.readFileSync(forgeOf(root), "utf8") === GENUINE_FORGE();
    if (genuineRelease && !attackerRecord() && !fs.existsSync(dir)) lost.push(path.basename(dir));
    else won++;
    fs.rmSync(root, { recursive: true, force: true });
  }
  const stats = await attacker.stop();
  console.log(
    `100 races in ${Date.now() - t0} ms: the attacker lost ${lost.length}, won ${won}; it saw ${String(stats.seen)} of the 100 directories; ${JSON.stringify(stats)}`,
  );
  expect(won).toBe(0);
  expect(lost).toHaveLength(100);
  expect(attackerRecord()).toBe("");
  // It did attack: it saw the directories and was refused (EACCES inside them, EPERM renaming them).
  expect(Number(stats.seen)).toBeGreaterThan(0);
}, 300_000);

/** A shell command as nobody (the attacker), which must succeed. */
function asNobody(command: string, ...args: string[]): void {
  const r = spawnSync(
    "setpriv",
    [`--reuid=${NOBODY}`, `--regid=${NOBODY}`, "--clear-groups", "sh", "-c", command, "sh", ...args],
    {
      encoding: "utf8",
    },
  );
  if (r.status !== 0) throw new Error(`as nobody: ${command}: ${r.stderr}`);
}

describe("hostile hosts: each refused with a message, no release made", () => {
  let root: string;
  let dir: string;
  beforeEach(() => {
    root = freshRoot();
    dir = prepareLocally(tmp);
    copyLocally(dir, genuine);
  });
  const refused = (message: RegExp) => {
    const r = runRelease(root, dir);
    expect(r.stderr).toMatch(message);
    expect(r.status).toBe(3);
    const releases = path.join(root, "opt/pulumi-lvm/releases");
    expect(fs.existsSync(releases) ? fs.readdirSync(releases) : []).toEqual([]);
    // root's staging copy is gone too
    const install = path.join(root, "opt/pulumi-lvm");
    expect(
      fs.existsSync(install) ? fs.readdirSync(install).filter((n) => n.startsWith(".incoming")) : [],
    ).toEqual([]);
    return r;
  };

  test("a /tmp without the sticky bit: the attacker swaps the directory for its own after the copy", () => {
    const loose = fs.mkdtempSync(path.join(scratch, "loose-"));
    fs.chmodSync(loose, 0o777);
    dir = prepareLocally(loose);
    copyLocally(dir, genuine);
    asNobody('mv "$1" "$1.mine" && mkdir -m 700 "$1" && cp "$2" "$1/bundle.tgz"', dir, evil);
    refused(
      /is not a directory only root can write \(owner and mode: nobody 700\): refusing the bundle in it/,
    );
  });

  test("the same, the directory swapped for a symlink to the attacker's", () => {
    const loose = fs.mkdtempSync(path.join(scratch, "loose-"));
    fs.chmodSync(loose, 0o777);
    dir = prepareLocally(loose);
    copyLocally(dir, genuine);
    asNobody(
      'mv "$1" "$1.mine" && mkdir -m 700 "$1.evil" && cp "$2" "$1.evil/bundle.tgz" && ln -s "$1.evil" "$1"',
      dir,
      evil,
    );
    refused(/is not a directory only root can write \(owner and mode: nobody 777\)/);
  });

  test("a bundle that is not the planned one (a corrupt or altered copy): sha256 refused, both hashes named", () => {
    copyLocally(dir, fs.readFileSync(evil));
    const evilHash = crypto.createHash("sha256").update(fs.readFileSync(evil)).digest("hex");
    refused(new RegExp(`the copied bundle's sha256 is ${evilHash}, not the planned ${hash}: refusing it`));
  });

  test("the bundle is a symlink (to a genuine bundle elsewhere)", () => {
    fs.rmSync(path.join(dir, BUNDLE_FILE));
    fs.symlinkSync(genuine, path.join(dir, BUNDLE_FILE));
    refused(/the copied bundle .*bundle\.tgz is missing or not a regular file/);
  });

  test("the bundle belongs to another user", () => {
    fs.chownSync(path.join(dir, BUNDLE_FILE), NOBODY, NOBODY);
    refused(/the copied bundle .*bundle\.tgz belongs to nobody, not root: refusing it/);
  });

  test("the directory was opened to others (mode 0755)", () => {
    fs.chmodSync(dir, 0o755);
    refused(/is not a directory only root can write \(owner and mode: root 755\)/);
  });

  test("/opt/pulumi-lvm made beforehand by another user", () => {
    fs.mkdirSync(path.join(root, "opt/pulumi-lvm"), { recursive: true });
    fs.chownSync(path.join(root, "opt/pulumi-lvm"), NOBODY, NOBODY);
    refused(/opt\/pulumi-lvm belongs to nobody with mode 755 .*: refusing to install into it/);
    expect(fs.readdirSync(path.join(root, "opt/pulumi-lvm")).sort()).toEqual(["etc", "releases"]);
  });

  test("a releases directory anyone can write", () => {
    fs.mkdirSync(path.join(root, "opt/pulumi-lvm/releases"), { recursive: true });
    fs.chmodSync(path.join(root, "opt/pulumi-lvm/releases"), 0o777);
    refused(/releases belongs to root with mode 777 .*: refusing to install into it/);
  });
});

test("a node that another user could replace (found on PATH in a directory anyone can write) is refused before anything runs as root", () => {
  const root = freshRoot();
  const bin = fs.mkdtempSync(path.join(tmp, "bin-"));
  fs.chmodSync(bin, 0o777);
  fs.symlinkSync(process.execPath, path.join(bin, "node"));
  const dir = prepareLocally(tmp);
  copyLocally(dir, genuine);
  const r = spawnSync("sh", ["-c", installScript(inputOf(root), "https://127.0.0.1:9443", dir)], {
    encoding: "utf8",
    env: { ...process.env, PATH: `${bin}:${process.env.PATH}` },
  });
  expect(r.stderr).toContain(
    `node at ${bin}/node: ${bin} belongs to root with mode 777, so another user could replace what root runs: refusing it`,
  );
  expect(r.status).toBe(3);
  expect(fs.existsSync(path.join(root, "opt"))).toBe(false);
});
