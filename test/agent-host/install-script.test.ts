import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as os from "node:os";
import * as path from "node:path";
import {
  installScript,
  removeScript,
  type AgentHostScriptInput,
} from "../../src/components/agent-host-script";
import { parseAgentOutput } from "../../src/components/agent-host";
import { freePort } from "../net";

/**
 * The scripts AgentHost runs over SSH, run here by sh on this machine with every path under a
 * scratch root and no systemd (the detached-process fallback), against a real bundle made by
 * scripts/agent-bundle.sh and the real agent it starts. What SSH adds (the transport) is the
 * engine tier's; this shows what the host does with the bundle.
 */
const repo = path.resolve(__dirname, "../..");
let root: string;
let bundle: string;
let port: number;

beforeAll(async () => {
  root = fs.mkdtempSync(path.join(os.tmpdir(), "agent-host-script-"));
  bundle = execFileSync("bash", [path.join(repo, "scripts/agent-bundle.sh"), path.join(root, "bundle.tgz")], {
    encoding: "utf8",
    stdio: ["ignore", "pipe", "inherit"],
  }).trim();
  port = await freePort();
}, 600_000);

afterAll(() => {
  // The agent of a failed test would keep running: stop its supervisor's process group by the pid file.
  const pidFile = path.join(root, "opt/pulumi-lvm/agent.pid");
  if (fs.existsSync(pidFile))
    spawnSync("sh", ["-c", 'kill -TERM -"$1"', "sh", fs.readFileSync(pidFile, "utf8").trim()]);
  fs.rmSync(root, { recursive: true, force: true });
});

const input = (hash: string): AgentHostScriptInput => ({
  node: "edge-1",
  bundlePath: path.join(root, `copied-${hash}.tgz`),
  bundleHash: hash,
  port,
  certificateNames: ["10.0.0.11"],
  sudo: false,
  nodeMajor: 20,
  root,
});
const url = () => `https://127.0.0.1:${port}`;

/** Copies the bundle where CopyToRemote would have put it and runs the install script. */
function install(hash: string, env: NodeJS.ProcessEnv = process.env) {
  fs.copyFileSync(bundle, input(hash).bundlePath);
  return spawnSync("sh", ["-c", installScript(input(hash), url())], {
    encoding: "utf8",
    env,
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
  fs.copyFileSync(bundle, input("aaaa").bundlePath);
  const r = spawnSync("/bin/sh", ["-c", installScript(input("aaaa"), url())], {
    encoding: "utf8",
    env: { PATH: "/nonexistent" },
  });
  expect(r.status).toBe(3);
  expect(r.stderr).toContain("pulumi-lvm AgentHost edge-1: no node (Node.js >= 20) on this host");
  expect(fs.existsSync(path.join(root, "opt"))).toBe(false);
});

test("install: starts the agent over TLS and prints its URL, a token it accepts and its CA", async () => {
  const r = install("aaaa");
  expect(r.stderr).toContain("no systemd: starting the agent as a detached process");
  expect(r.status).toBe(0);
  first = parseAgentOutput("edge-1", r.stdout);
  expect(first.url).toBe(url());
  // The CA pinned, the token accepted; another token refused.
  const ok = await get("/v1/status", { ca: first.caCertificate, token: first.token });
  expect(ok.status).toBe(200);
  expect(JSON.parse(ok.body).node).toBe("edge-1");
  expect((await get("/v1/status", { ca: first.caCertificate, token: "x".repeat(32) })).status).toBe(401);
  // Only the agent's CA is trusted: the system CAs do not know it.
  await expect(get("/healthz", { ca: "" })).rejects.toThrow();
  // The copied bundle is gone, the token file is private.
  expect(fs.existsSync(input("aaaa").bundlePath)).toBe(false);
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

test("upgrade (a new bundle hash): same token and certificate; the old release's delete leaves the agent", async () => {
  const r = install("bbbb");
  expect(r.status).toBe(0);
  expect(parseAgentOutput("edge-1", r.stdout)).toEqual(first);
  const old = spawnSync("sh", ["-c", removeScript(input("aaaa"))], { encoding: "utf8" });
  expect(old.status).toBe(0);
  expect(fs.existsSync(path.join(root, "opt/pulumi-lvm/releases/aaaa"))).toBe(false);
  expect(fs.readlinkSync(path.join(root, "opt/pulumi-lvm/current"))).toBe("releases/bbbb/package");
  expect((await get("/v1/status", { ca: first.caCertificate, token: first.token })).status).toBe(200);
}, 180_000);

test("delete: the agent stops, its files go, the journal stays", async () => {
  const r = spawnSync("sh", ["-c", removeScript(input("bbbb"))], { encoding: "utf8" });
  expect(r.status).toBe(0);
  expect(fs.existsSync(path.join(root, "opt/pulumi-lvm"))).toBe(false);
  expect(fs.existsSync(path.join(root, "var/lib/pulumi-lvm/agent"))).toBe(true);
  // The process got SIGTERM; give it its shutdown.
  let refused = false;
  for (let i = 0; i < 40 && !refused; i++) {
    refused = await get("/healthz", { ca: first.caCertificate }).then(
      () => false,
      (e: NodeJS.ErrnoException) => e.code === "ECONNREFUSED",
    );
    if (!refused) await new Promise((res) => setTimeout(res, 250));
  }
  expect(refused).toBe(true);
}, 60_000);
