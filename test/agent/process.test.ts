/**
 * The agent as a program: configuration errors at start-up, one agent per state directory,
 * readiness, and a graceful stop on SIGTERM.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { REPO, request, requireHostTier, Scratch, startAgent, writeTokenFile } from "./harness";

jest.setTimeout(120_000);

let scratch: Scratch;
beforeAll(() => {
  requireHostTier();
  scratch = new Scratch("process");
  writeTokenFile(scratch.path("tokens"), { op: { user: "operator", node: "*" } });
});
afterAll(() => scratch?.cleanup());

function runSync(args: string[]) {
  return spawnSync(process.execPath, ["--import", "tsx", path.join(REPO, "src/agent/main.ts"), ...args], {
    cwd: REPO,
    encoding: "utf8",
    env: { PATH: process.env.PATH },
    timeout: 30_000,
  });
}

describe("the agent program", () => {
  it("refuses a bad configuration with exit 2, naming every bad flag", () => {
    const r = runSync([
      "--node",
      "Bad_Name",
      "--listen",
      "0.0.0.0:80",
      "--devices",
      "/dev/../sda",
      "--state-dir",
      "rel",
    ]);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain("pulumi-lvm agent: invalid configuration:");
    for (const flag of [
      "--node:",
      "--listen:",
      "--devices:",
      "--state-dir:",
      "--token-file: no authentication configured",
    ])
      expect(r.stderr).toContain(flag);
    expect(r.stderr).toContain("usage: pulumi-lvm agent");
  });

  it.each([
    [
      "--token-file",
      ["--token-file", "/nonexistent/tokens"],
      "--token-file: cannot read /nonexistent/tokens: no such file",
    ],
    [
      "--tls-cert",
      ["--token-file", "TOKENS", "--tls-cert", "/nonexistent/cert.pem", "--tls-key", "/nonexistent/key.pem"],
      "--tls-cert: cannot read /nonexistent/cert.pem: no such file",
    ],
  ])("a missing %s file is an error naming the flag and the file, exit 2", (_flag, flags, expected) => {
    const r = runSync([
      "--node",
      "node-proc",
      "--listen",
      "127.0.0.1:0",
      "--state-dir",
      scratch.path(`state-missing-${_flag.slice(2)}`),
      ...flags.map((f) => (f === "TOKENS" ? scratch.path("tokens") : f)),
    ]);
    expect(r.stderr).toContain(expected);
    expect(r.stderr).not.toContain("ENOENT");
    expect(r.status).toBe(2);
  });

  it("is ready, keeps other agents off its state directory, and stops gracefully on SIGTERM", async () => {
    const dev = scratch.loop();
    const options = {
      node: "node-proc",
      devices: [dev],
      ...scratch.agentFiles(),
      auth: { tokenFile: scratch.path("tokens") },
    };
    const agent = await startAgent(options);
    expect((await request(agent.url, "GET", "/readyz")).status).toBe(200);
    expect(fs.readFileSync(scratch.path("state/agent.pid"), "utf8").trim()).toBe(String(agent.pid));

    const second = runSync([
      "--node",
      "node-proc",
      "--token-file",
      scratch.path("tokens"),
      "--state-dir",
      scratch.path("state"),
      "--listen",
      "127.0.0.1:0",
    ]);
    expect(second.status).toBe(1);
    expect(second.stderr).toContain(`is in use by another agent (pid ${agent.pid}`);

    await agent.stop();
    expect(await agent.exited).toEqual({ code: 0, signal: null });
    expect(agent.logs.map((l) => l.msg)).toEqual(expect.arrayContaining(["stopping", "stopped"]));
    expect(fs.readFileSync(scratch.path("state/agent.pid"), "utf8")).toBe(""); // released; the lock file stays
  });
});
