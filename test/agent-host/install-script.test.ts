import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import * as crypto from "node:crypto";
import * as forge from "node-forge";
import {
  credentialsIdOf,
  installScript,
  removeScript,
  type AgentHostScriptInput,
} from "../../src/components/agent-host-script";
import { parseAgentOutput } from "../../src/components/agent-host";
import { freePort } from "../net";
import { copyLocally, prepareLocally } from "./local-flow";

/**
 * The scripts AgentHost runs over SSH, run here by sh on this machine with every path under a
 * scratch root and no systemd (the detached-process fallback), against a real bundle made by
 * scripts/agent-bundle.sh and the real agent it starts. What SSH adds (the transport) is the
 * engine tier's; this shows what the host does with the bundle. A second bundle (the first with one
 * file more) is the upgrade.
 */
const repo = path.resolve(__dirname, "../..");
let root: string;
let bundle: string;
let upgrade: string;
let port: number;
const sha256 = (file: string) => crypto.createHash("sha256").update(fs.readFileSync(file)).digest("hex");

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-host-script-"));
  bundle = execFileSync("bash", [path.join(repo, "scripts/agent-bundle.sh"), path.join(root, "bundle.tgz")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  const unpacked = fs.mkdtempSync(path.join(root, "upgrade-"));
  execFileSync("tar", ["-xzf", bundle, "-C", unpacked]);
  fs.writeFileSync(path.join(unpacked, "package/UPGRADE"), "the next release\n");
  upgrade = path.join(root, "upgrade.tgz");
  execFileSync("tar", ["-czf", upgrade, "-C", unpacked, "package"]);
  fs.rmSync(unpacked, { recursive: true });
  port = await freePort();
}, 600_000);

afterAll(() => {
  // The agent of a failed test would keep running: stop its supervisor's process group by the pid file.
  const pidFile = path.join(root, "opt/pulumi-lvm/agent.pid");
  if (fs.existsSync(pidFile))
    spawnSync("sh", ["-c", 'kill -TERM -"$1"', "sh", fs.readFileSync(pidFile, "utf8").trim()]);
  fs.rmSync(root, { recursive: true, force: true });
});

const input = (hash: string, revision = ""): AgentHostScriptInput => ({
  node: "edge-1",
  bundleHash: hash,
  credentialsId: credentialsIdOf(revision),
  port,
  certificateNames: ["10.0.0.11"],
  sudo: false,
  nodeMajor: 20,
  root,
});
const url = () => `https://127.0.0.1:${port}`;

/** The prepare command and the copy as AgentHost runs them, then the install script; its directory. */
function install(file: string, revision = "", env: NodeJS.ProcessEnv = process.env) {
  const dir = prepareLocally(root);
  copyLocally(dir, file);
  const r = spawnSync("sh", ["-c", installScript(input(sha256(file), revision), url(), dir)], {
    encoding: "utf8",
    env,
    timeout: 120_000,
  });
  lastDir = dir;
  return { ...r, dir };
}

let lastDir = "";
/** The install script run again as a Command update runs it: the last install's directory, gone by now. */
function rerun(file: string, revision: string) {
  expect(fs.existsSync(lastDir)).toBe(false);
  return spawnSync("sh", ["-c", installScript(input(sha256(file), revision), url(), lastDir)], {
    encoding: "utf8",
    timeout: 120_000,
  });
}

function get(
  pathname: string,
  opts: { ca: string; token?: string },
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      `${url()}${pathname}`,
      // A fresh connection each time: a kept-alive one would still lead to an agent that was replaced.
      { ca: opts.ca, agent: false, headers: opts.token ? { authorization: `Bearer ${opts.token}` } : {} },
      (res) => {
        let body = "";
        res.on("data", (d) => (body += d)).on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
  });
}

let first: ReturnType<typeof parseAgentOutput>;

test("a host without Node.js: a clear error naming the node, nothing installed", () => {
  const dir = prepareLocally(root);
  copyLocally(dir, bundle);
  const r = spawnSync("/bin/sh", ["-c", installScript(input(sha256(bundle)), url(), dir)], {
    encoding: "utf8",
    env: { PATH: "/nonexistent" },
  });
  expect(r.status).toBe(3);
  expect(r.stderr).toContain("pulumi-lvm AgentHost edge-1: no node (Node.js >= 20) on this host");
  expect(fs.existsSync(path.join(root, "opt"))).toBe(false);
});

test("install: starts the agent over TLS and prints its URL, a token it accepts and its CA", async () => {
  const r = install(bundle);
  expect(r.stderr).toContain("no systemd: starting the agent as a detached process");
  expect(r.status).toBe(0);
  first = parseAgentOutput("edge-1", r.stdout, url());
  expect(first.url).toBe(url());
  // The CA pinned, the token accepted; another token refused.
  const ok = await get("/v1/status", { ca: first.caCertificate, token: first.token });
  expect(ok.status).toBe(200);
  expect(JSON.parse(ok.body).node).toBe("edge-1");
  expect((await get("/v1/status", { ca: first.caCertificate, token: "x".repeat(32) })).status).toBe(401);
  // Only the agent's CA is trusted: the system CAs do not know it.
  await expect(get("/healthz", { ca: "" })).rejects.toThrow();
  // The directory the bundle was copied into is gone, the token file is private.
  expect(fs.existsSync(r.dir)).toBe(false);
  expect(fs.statSync(path.join(root, "opt/pulumi-lvm/etc/tokens")).mode & 0o077).toBe(0);
}, 180_000);

test("no systemd: the supervisor starts the agent again when it dies, as systemd's Restart=on-failure would", async () => {
  const supervisor = fs.readFileSync(path.join(root, "opt/pulumi-lvm/agent.pid"), "utf8").trim();
  // The agent is the supervisor's child: the only other process in its process group.
  const members = () =>
    execFileSync("ps", ["-o", "pid=", "-g", supervisor], { encoding: "utf8" })
      .split("\n")
      .map((l) => l.trim())
      .filter((p) => p && p !== supervisor);
  const [agentPid] = members();
  expect(agentPid).toMatch(/^\d+$/);
  process.kill(Number(agentPid), "SIGKILL");
  let restarted: string | undefined;
  for (let i = 0; i < 120 && !restarted; i++) {
    await new Promise((res) => setTimeout(res, 250));
    const now = members().filter((p) => p !== agentPid);
    if (
      now.length &&
      (await get("/healthz", { ca: first.caCertificate }).catch(() => undefined))?.status === 200
    )
      restarted = now[0];
  }
  expect(restarted).toMatch(/^\d+$/);
  expect(fs.readFileSync(path.join(root, "var/log/pulumi-lvm-agent.log"), "utf8")).toContain(
    "pulumi-lvm-agent supervisor: the agent exited",
  );
  // The same token still works: the restarted agent reads the same files.
  expect((await get("/v1/status", { ca: first.caCertificate, token: first.token })).status).toBe(200);
}, 120_000);

test("the serving certificate is a leaf for at most a year, and pinned: a certificate the agent's own key signs is refused", async () => {
  const cert = forge.pki.certificateFromPem(first.caCertificate);
  expect(cert.getExtension("basicConstraints")).toMatchObject({ cA: false });
  expect(cert.getExtension("keyUsage")).not.toMatchObject({ keyCertSign: true });
  const days = (cert.validity.notAfter.getTime() - cert.validity.notBefore.getTime()) / 86_400_000;
  expect(days).toBeLessThanOrEqual(366);
  // Whoever holds the host's key signs another certificate for the same names: NodeSet, trusting
  // only the printed certificate, must refuse it.
  const key = forge.pki.privateKeyFromPem(
    fs.readFileSync(path.join(root, "opt/pulumi-lvm/etc/tls.key"), "utf8"),
  );
  const other = forge.pki.createCertificate();
  other.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
  other.serialNumber = "02";
  other.validity.notBefore = new Date(Date.now() - 60_000);
  other.validity.notAfter = new Date(Date.now() + 86_400_000);
  other.setSubject([{ name: "commonName", value: "another" }]);
  other.setIssuer(cert.subject.attributes);
  other.setExtensions([{ name: "subjectAltName", altNames: [{ type: 7, ip: "127.0.0.1" }] }]);
  other.sign(key, forge.md.sha256.create());
  const server = https.createServer(
    { cert: forge.pki.certificateToPem(other), key: forge.pki.privateKeyToPem(key) },
    (_req, res) => res.end("impostor"),
  );
  await new Promise<void>((res) => server.listen(0, "127.0.0.1", res));
  const otherPort = (server.address() as { port: number }).port;
  const answer = await new Promise<string>((resolve) =>
    https
      .get(`https://127.0.0.1:${otherPort}/`, { ca: first.caCertificate, agent: false }, (res) => {
        res.resume();
        resolve(`accepted (${res.statusCode})`);
      })
      .on("error", (e: NodeJS.ErrnoException) => resolve(`refused: ${e.code}`)),
  );
  server.close();
  expect(answer).toMatch(/^refused/);
});

test("upgrade (a new bundle hash): same token and certificate; the old release's delete leaves the agent", async () => {
  const r = install(upgrade);
  expect(r.status).toBe(0);
  expect(parseAgentOutput("edge-1", r.stdout, url())).toEqual(first);
  const old = spawnSync("sh", ["-c", removeScript(input(sha256(bundle)))], { encoding: "utf8" });
  expect(old.status).toBe(0);
  expect(fs.existsSync(path.join(root, "opt/pulumi-lvm/releases", sha256(bundle)))).toBe(false);
  expect(fs.readlinkSync(path.join(root, "opt/pulumi-lvm/current"))).toBe(
    `releases/${sha256(upgrade)}/package`,
  );
  expect((await get("/v1/status", { ca: first.caCertificate, token: first.token })).status).toBe(200);
}, 180_000);

let rotated: ReturnType<typeof parseAgentOutput>;

test("rotation (a new credentials revision): a new token and certificate, the old token refused; the old revision's delete leaves the agent", async () => {
  // The Command provider runs the changed script again (an update): the same directory, long
  // removed, no new copy; the release is in place.
  const r = rerun(upgrade, "2027-01");
  expect(r.status).toBe(0);
  expect(r.stderr).toContain("the credentials revision changed: a new token and serving certificate");
  rotated = parseAgentOutput("edge-1", r.stdout, url());
  expect(rotated.token).not.toBe(first.token);
  expect(rotated.caCertificate).not.toBe(first.caCertificate);
  expect((await get("/v1/status", { ca: rotated.caCertificate, token: rotated.token })).status).toBe(200);
  expect((await get("/v1/status", { ca: rotated.caCertificate, token: first.token })).status).toBe(401);
  await expect(get("/healthz", { ca: first.caCertificate })).rejects.toThrow();
  // Were the rotation a replacement (it comes with a new bundle), the old command's delete would
  // run after the new create: it leaves the host to the later revision.
  const old = spawnSync("sh", ["-c", removeScript(input(sha256(upgrade)))], { encoding: "utf8" });
  expect(old.status).toBe(0);
  expect((await get("/v1/status", { ca: rotated.caCertificate, token: rotated.token })).status).toBe(200);
  // The same revision again: nothing new.
  const again = rerun(upgrade, "2027-01");
  expect(again.status).toBe(0);
  expect(parseAgentOutput("edge-1", again.stdout, url())).toEqual(rotated);
}, 240_000);

test("delete: the agent stops, its files go, the journal stays", async () => {
  const r = spawnSync("sh", ["-c", removeScript(input(sha256(upgrade), "2027-01"))], { encoding: "utf8" });
  expect(r.status).toBe(0);
  expect(fs.existsSync(path.join(root, "opt/pulumi-lvm"))).toBe(false);
  expect(fs.existsSync(path.join(root, "var/lib/pulumi-lvm/agent"))).toBe(true);
  // The process got SIGTERM; give it its shutdown.
  let refused = false;
  for (let i = 0; i < 40 && !refused; i++) {
    refused = await get("/healthz", { ca: rotated.caCertificate }).then(
      () => false,
      (e: NodeJS.ErrnoException) => e.code === "ECONNREFUSED",
    );
    if (!refused) await new Promise((res) => setTimeout(res, 250));
  }
  expect(refused).toBe(true);
}, 60_000);
