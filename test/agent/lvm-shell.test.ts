/**
 * The agent's lvm shell (issue 18) against real lvm on loop devices: what it answers equals what the
 * same commands print run by themselves, a failed report carries lvm's own exit status and stderr, a
 * shell killed (kill -9) under a report or an apply is replaced and the report retried one-shot, a
 * hung shell (SIGSTOP) is killed with its group at the timeout and the next report gets a new one.
 */
import * as path from "node:path";
import {
  createLvmRunner,
  LvmCommandError,
  type CommandLogEntry,
  type LvmRoute,
} from "../../src/agent/lvm-runner";
import { LvmShell, spawnLvmShellProcess } from "../../src/agent/lvm-shell";
import { LVM_SHELL_SETTINGS } from "../../src/agent/lvm-shell-protocol";
import { writeSyncIoSystemDir } from "../../src/agent/lvm-system-dir";
import { fullreportArgv } from "../../src/inventory/lvm-report";
import { agentTestbed } from "../support/agent/testbed";
import { commandLogLines, lvm, request, thickSpec } from "./harness";

jest.setTimeout(180_000);

const bed = agentTestbed("lvm-shell");
const shells: LvmShell[] = [];
afterAll(async () => {
  for (const s of shells) await s.close();
});

/** A runner confined to `devices` with an lvm shell on a copy of /etc/lvm written under the scratch. */
async function shellRunner(devices: string[], name: string, opts: { killGraceMs?: number } = {}) {
  const dir = bed.scratch.path(name);
  await writeSyncIoSystemDir({
    to: dir,
    run: createLvmRunner({}),
    runWithCopy: createLvmRunner({ lvmSystemDir: dir }),
    extraSettings: LVM_SHELL_SETTINGS,
  });
  const shell = new LvmShell({
    spawn: spawnLvmShellProcess,
    argv: ["lvm"],
    env: { PATH: process.env.PATH, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1", LVM_SYSTEM_DIR: dir },
    ...(opts.killGraceMs ? { killGraceMs: opts.killGraceMs } : {}),
  });
  shells.push(shell);
  const log: CommandLogEntry[] = [];
  const routes: LvmRoute[] = [];
  const run = createLvmRunner({ devices, shell, log: (e) => log.push(e), routed: (_t, r) => routes.push(r) });
  return { run, log, routes, shell };
}

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

it("answers reports exactly as the same commands print them by themselves, and failures with lvm's own error", async () => {
  const L = [bed.scratch.loop(64), bed.scratch.loop(64)];
  lvm(L, ["vgcreate", "agt-sh-eq", L[0]!]);
  lvm(L, ["pvcreate", L[1]!]);
  const { run, routes } = await shellRunner(L, "copy-eq");
  const oneShot = createLvmRunner({ devices: L });
  const reports = [
    fullreportArgv(L),
    ["pvs", "--reportformat", "json", "--devices", L.join(",")],
    ["vgs", "--reportformat", "json", "-o", "vg_name,vg_size", "--units", "b", "--devices", L.join(",")],
    ["lvs", "--reportformat", "json", "--devices", L.join(",")],
  ];
  for (let round = 0; round < 2; round++)
    for (const argv of reports) {
      const a = await run(argv);
      const b = await oneShot(argv);
      expect({ argv, out: a.stdout }).toEqual({ argv, out: b.stdout });
      expect(a.stdout).toContain('"report"');
    }
  expect(routes.every((r) => r.via === "shell")).toBe(true);
  const missing = ["vgs", "--reportformat", "json", "--devices", L.join(","), "agt-sh-nosuch"];
  const viaShell = await run(missing).catch((e: unknown) => e);
  const byItself = await oneShot(missing).catch((e: unknown) => e);
  expect(viaShell).toBeInstanceOf(LvmCommandError);
  const fields = (e: unknown) => {
    const err = e as LvmCommandError;
    return { message: err.message, exitCode: err.exitCode, stderr: err.stderr };
  };
  expect(fields(viaShell)).toEqual(fields(byItself));
  expect((viaShell as LvmCommandError).exitCode).toBe(5);
  expect(routes.at(-1)).toEqual({ via: "one-shot", reason: "exact-error" });
});

it("a shell killed (kill -9) under a report: the report is retried by itself and succeeds; the next gets a new shell", async () => {
  const L = [bed.scratch.loop(64)];
  lvm(L, ["vgcreate", "agt-sh-kill", L[0]!]);
  const { run, log, routes } = await shellRunner(L, "copy-kill");
  const expected = (await createLvmRunner({ devices: L })(fullreportArgv(L))).stdout;
  await run(fullreportArgv(L));
  const pid = log.at(-1)!.shellPid!;
  process.kill(pid, "SIGSTOP"); // it will be killed with the report in it
  const pending = run(fullreportArgv(L));
  await new Promise((r) => setTimeout(r, 300));
  process.kill(pid, "SIGKILL");
  expect((await pending).stdout).toBe(expected);
  expect(routes.at(-1)).toEqual({ via: "one-shot", reason: "shell-died" });
  expect(log.at(-2)).toMatchObject({
    via: "shell",
    shellPid: pid,
    signal: "SIGKILL",
    rerun: "the lvm shell was killed by SIGKILL",
  });
  expect((await run(fullreportArgv(L))).stdout).toBe(expected);
  expect(log.at(-1)!.via).toBe("shell");
  expect(log.at(-1)!.shellPid).not.toBe(pid);
});

it("a hung shell (SIGSTOP): the report times out, the shell's group is killed, the next report gets a new shell", async () => {
  const L = [bed.scratch.loop(64)];
  lvm(L, ["pvcreate", L[0]!]);
  const { run, log } = await shellRunner(L, "copy-hang", { killGraceMs: 500 });
  await run(fullreportArgv(L));
  const pid = log.at(-1)!.shellPid!;
  process.kill(pid, "SIGSTOP");
  const err = await run(fullreportArgv(L), { timeoutMs: 1500 }).catch((e: unknown) => e);
  expect(err).toBeInstanceOf(LvmCommandError);
  expect(err).toMatchObject({ exitCode: null, details: { timedOut: true, signal: "SIGKILL" } });
  expect((err as Error).message).toMatch(/^lvm fullreport --reportformat json .* timed out/);
  expect(alive(pid)).toBe(false);
  const next = await run(fullreportArgv(L));
  expect(next.stdout).toBe((await createLvmRunner({ devices: L })(fullreportArgv(L))).stdout);
  expect(next.stdout).toContain(L[0]);
  expect(log.at(-1)!.shellPid).not.toBe(pid);
});

it("an agent with --lvm-sync-io runs discovery's report in its shell; the shell killed under an apply: the apply completes", async () => {
  const L = [bed.scratch.loop(64), bed.scratch.loop(64)];
  const { agent, token } = await bed.start({
    node: "node-lvm-shell",
    devices: L,
    extraArgs: ["--lvm-sync-io"],
  });
  const files = bed.scratch.agentFiles();
  const inv = await request(agent.url, "GET", "/v1/inventory", { token });
  expect(inv.status).toBe(200);
  const metrics = (await request(agent.url, "GET", "/metrics", { token })).text;
  expect(metrics).toMatch(/^pulumi_lvm_agent_lvm_shell_available 1$/m);
  expect(metrics).toMatch(/^pulumi_lvm_agent_lvm_commands_total\{via="shell",reason="report"\} [1-9]/m);
  const shellLines = () =>
    commandLogLines(files.commandLog).filter((l) => (l as { via?: string }).via === "shell");
  const pid = (shellLines().at(-1) as { shellPid?: number }).shellPid!;
  expect(pid).toBeGreaterThan(0);

  const spec = thickSpec("agt-sh-apply", L);
  const planned = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  expect(planned.status).toBe(200);
  // The apply's own discovery will be written to a stopped shell, which is then killed under it.
  process.kill(pid, "SIGSTOP");
  const before = shellLines().length;
  const applying = request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: planned.json.hash },
  });
  for (let i = 0; i < 100 && shellLines().length === before; i++)
    await new Promise((r) => setTimeout(r, 100));
  expect(shellLines().length).toBeGreaterThan(before);
  process.kill(pid, "SIGKILL");
  const applied = await applying;
  expect({ status: applied.status, text: applied.status === 200 ? "" : applied.text }).toEqual({
    status: 200,
    text: "",
  });
  const vgs = lvm(L, ["vgs", "--noheadings", "-o", "vg_name"]);
  expect(vgs).toContain("agt-sh-apply");
  const after = (await request(agent.url, "GET", "/metrics", { token })).text;
  expect(after).toMatch(/^pulumi_lvm_agent_lvm_commands_total\{via="one-shot",reason="shell-died"\} 1$/m);
  expect(after).toMatch(/^pulumi_lvm_agent_lvm_shell_ends_total\{reason="died"\} 1$/m);
  // Writes never went through a shell. The agent's shell answered discovery's reports; the confined
  // agent's names read before vgcreate ran in its names shell, a process of its own.
  const namesRead = (l: { requested: string[] }) =>
    JSON.stringify(l.requested) === JSON.stringify(["vgs", "--reportformat", "json", "-o", "vg_name"]);
  const shellPid = (l: object) => (l as { shellPid?: number }).shellPid;
  const [names, reports] = [shellLines().filter(namesRead), shellLines().filter((l) => !namesRead(l))];
  expect(names.map((l) => l.event)).toEqual(["start", "end"]);
  expect(reports.every((l) => l.tool === "lvm" && l.requested[1] === "fullreport")).toBe(true);
  expect(reports.map(shellPid)).not.toContain(shellPid(names[0]!));
  expect(path.basename(files.stateDir)).toBe("state");
});
