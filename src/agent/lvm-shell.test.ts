import { FakeLvmShell, oneShotText, type FakeReply } from "../../test/support/agent/fake-lvm-shell";
import { createLvmRunner, LvmCommandError, type CommandLogEntry, type LvmRoute } from "./lvm-runner";
import { LvmShell, type ShellEnd } from "./lvm-shell";
import { AgentMetrics } from "./metrics";

/**
 * LvmShell and the runner's shell route against a stand-in shell (test/support/agent/fake-lvm-shell.ts,
 * answering in lvm 2.03.16's format) and, for one-shot commands, a stand-in tool run through the
 * command prefix (`node -e <script> --`) that prints the same report as a process of its own would,
 * or fails as lvm does. The real lvm shell: test/agent/lvm-shell.test.ts.
 */
const ROWS = `          {\n              "pv": [\n                  {"pv_name":"/dev/loop3", "vg_name":"vg0"}\n              ]\n          }`;
const ONE_SHOT_TOOL = `
const args = process.argv.slice(1);
if (args.includes("nosuchvg")) { process.stderr.write('  Volume group "nosuchvg" not found\\n'); process.exit(5); }
process.stdout.write(${JSON.stringify(oneShotText(ROWS))});
`;
/** A timeout for the shell's hangs: the one-shot stand-ins (node processes) get the runner's 20 s. */
const SHORT = { timeoutMs: 300 };
const REPORT = ["lvm", "fullreport", "--reportformat", "json", "--units", "b", "--nosuffix"];

function setup(
  reply?: ConstructorParameters<typeof FakeLvmShell>[0],
  shellOptions: { now?: () => number } = {},
) {
  const fake = new FakeLvmShell(reply);
  const ends: ShellEnd[] = [];
  const shell = new LvmShell({
    spawn: fake.spawn,
    argv: ["lvm"],
    env: { LVM_SYSTEM_DIR: "/var/tmp/shell-copy" },
    killGraceMs: 50,
    startTimeoutMs: 500,
    retryAfterMs: 1000,
    ...shellOptions,
    observer: { ended: (why) => ends.push(why) },
  });
  const log: CommandLogEntry[] = [];
  const starts: unknown[] = [];
  const routes: LvmRoute[] = [];
  const run = createLvmRunner({
    commandPrefix: [process.execPath, "-e", ONE_SHOT_TOOL, "--"],
    shell,
    log: (e) => log.push(e),
    logStart: (e) => starts.push(e),
    routed: (_tool, r) => routes.push(r),
    timeoutMs: 20_000,
  });
  return { fake, shell, run, log, starts, routes, ends };
}

describe("the runner's lvm shell", () => {
  afterEach(() => jest.useRealTimers());

  it("answers a report from the shell, exactly as the same command prints it by itself", async () => {
    const t = setup((line) => (line.startsWith("formats") ? { messages: ["lvm2"] } : { report: ROWS }));
    const first = await t.run(REPORT);
    const second = await t.run(REPORT);
    expect(first.stdout).toBe(oneShotText(ROWS));
    expect(second.stdout).toBe(first.stdout);
    expect(first.stderr).toBe("");
    expect(t.fake.processes).toHaveLength(1);
    expect(t.fake.starts[0]!.env).toMatchObject({
      LVM_SYSTEM_DIR: "/var/tmp/shell-copy",
      LVM_REPORT_FD: "3",
    });
    // The probe, then the two reports, each word quoted, --config included.
    const lines = t.fake.current!.lines;
    expect(lines[0]).toBe("formats\n");
    expect(lines[1]).toMatch(
      /^'lvm' 'fullreport' '--config' 'devices \{ use_devicesfile=0 \}' '--reportformat' 'json'/,
    );
    expect(t.routes).toEqual([
      { via: "shell", kind: "report" },
      { via: "shell", kind: "report" },
    ]);
    expect(t.starts).toHaveLength(2);
    expect(t.log.map((e) => [e.via, e.exitCode, e.shellPid])).toEqual([
      ["shell", 0, 1000],
      ["shell", 0, 1000],
    ]);
    // The log names the command as a one-shot run would: prefix and --config included.
    expect(t.log[0]!.argv.slice(4, 7)).toEqual(["lvm", "fullreport", "--config"]);
  });

  it("re-runs a failed report by itself, so the error carries lvm's own exit status and stderr", async () => {
    const t = setup((line) =>
      line.includes("nosuchvg")
        ? { report: ROWS, messages: ['Volume group \\"nosuchvg\\" not found'], retCode: 5 }
        : {},
    );
    const err = await t.run(["vgs", "--reportformat", "json", "nosuchvg"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LvmCommandError);
    expect(err).toMatchObject({ exitCode: 5, stderr: '  Volume group "nosuchvg" not found\n' });
    expect(t.routes).toEqual([{ via: "one-shot", reason: "exact-error" }]);
    expect(t.log.map((e) => [e.via, e.exitCode, e.rerun])).toEqual([
      ["shell", 5, "lvm returned 5"],
      [undefined, 5, undefined],
    ]);
  });

  it("re-runs by itself a successful report that printed anything (messages, stderr)", async () => {
    const t = setup((line) =>
      line.startsWith("formats") ? {} : { report: ROWS, stderr: "  WARNING: something\n" },
    );
    const r = await t.run(REPORT);
    expect(r.stdout).toBe(oneShotText(ROWS));
    expect(t.routes).toEqual([{ via: "one-shot", reason: "exact-error" }]);
    expect(t.log[0]!.rerun).toMatch(/printed messages/);
  });

  it("kills the shell's process group on a timeout, fails like a one-shot timeout, and starts a new shell next", async () => {
    const t = setup((line) =>
      line.startsWith("formats") ? {} : t.fake.processes.length === 1 ? "hang" : { report: ROWS },
    );
    const err = await t.run(REPORT, SHORT).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LvmCommandError);
    expect(err).toMatchObject({ exitCode: null, details: { timedOut: true } });
    expect((err as Error).message).toMatch(/^lvm fullreport --reportformat json .* timed out/);
    expect(t.fake.processes[0]!.signals[0]).toBe("SIGTERM");
    expect(t.fake.processes[0]!.alive).toBe(false);
    expect(t.ends).toEqual(["timeout"]);
    expect(t.log[0]).toMatchObject({ via: "shell", timedOut: true, exitCode: null });
    const next = await t.run(REPORT);
    expect(next.stdout).toBe(oneShotText(ROWS));
    expect(t.fake.processes).toHaveLength(2);
  });

  it("SIGKILLs a stopped (SIGSTOPped) shell after the grace", async () => {
    const t = setup((line) => {
      if (line.startsWith("formats")) return {};
      t.fake.current!.stopped = true;
      return "hang";
    });
    const err = await t.run(REPORT, SHORT).catch((e: unknown) => e);
    expect(err).toMatchObject({ details: { timedOut: true, signal: "SIGKILL" } });
    expect(t.fake.processes[0]!.signals).toEqual(["SIGTERM", "SIGKILL"]);
  });

  it("retries once by itself the report a dying shell was running, and restarts the shell on next use", async () => {
    let kill = true;
    const t = setup((line) => {
      if (line.startsWith("formats")) return {};
      if (kill) {
        kill = false;
        return "die";
      }
      return { report: ROWS };
    });
    const r = await t.run(REPORT);
    expect(r.stdout).toBe(oneShotText(ROWS));
    expect(t.routes).toEqual([{ via: "one-shot", reason: "shell-died" }]);
    expect(t.log[0]).toMatchObject({
      via: "shell",
      exitCode: null,
      signal: "SIGKILL",
      rerun: "the lvm shell was killed by SIGKILL",
    });
    expect(t.ends).toEqual(["died"]);
    await t.run(REPORT);
    expect(t.fake.processes).toHaveLength(2);
    expect(t.routes[1]).toEqual({ via: "shell", kind: "report" });
  });

  it("fails with the retry's own error when the report fails by itself too", async () => {
    const t = setup((line) => (line.startsWith("formats") ? {} : "die"));
    const err = await t.run(["vgs", "--reportformat", "json", "nosuchvg"]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LvmCommandError);
    expect((err as Error).message).toBe(
      'vgs --reportformat json nosuchvg exited 5: Volume group "nosuchvg" not found',
    );
  });

  it("treats output that is no answer as a dead shell", async () => {
    const t = setup((line) =>
      line.startsWith("formats") ? {} : t.fake.processes.length === 1 ? "garble" : { report: ROWS },
    );
    // "  {\n  }\n" ends a top-level object but holds no status entry: not an answer yet; the shell is
    // then killed by the timeout, and the next report gets a new one.
    await expect(t.run(REPORT, SHORT)).rejects.toMatchObject({ details: { timedOut: true } });
    expect((await t.run(REPORT)).stdout).toBe(oneShotText(ROWS));
  });

  it("runs a report by itself while another is in the shell (no queue)", async () => {
    let release: (() => void) | undefined;
    const t = setup((line) => (line.startsWith("formats") ? {} : { report: ROWS }));
    await t.run(REPORT); // started
    const proc = t.fake.current!;
    const write = proc.write.bind(proc);
    proc.write = (text) => void new Promise<void>((r) => (release = r)).then(() => write(text));
    const inShell = t.run(REPORT);
    await new Promise((r) => setImmediate(r));
    const meanwhile = await t.run(REPORT);
    release!();
    await inShell;
    expect(meanwhile.stdout).toBe(oneShotText(ROWS));
    expect(t.routes).toEqual([
      { via: "shell", kind: "report" },
      { via: "one-shot", reason: "shell-busy" },
      { via: "shell", kind: "report" },
    ]);
  });

  it("goes one-shot for a while when a new shell does not answer its first command, and says so in /metrics", async () => {
    let now = 0;
    let answer = false;
    const t = setup((line) => (line.startsWith("formats") && !answer ? "hang" : { report: ROWS }), {
      now: () => now,
    });
    const metrics = new AgentMetrics();
    metrics.lvmShellObserver(() => t.shell.available);
    const r = await t.run(REPORT);
    expect(r.stdout).toBe(oneShotText(ROWS));
    expect(t.routes).toEqual([{ via: "one-shot", reason: "shell-down" }]);
    expect(t.ends).toEqual(["start-failed"]);
    expect(t.starts).toHaveLength(1); // only the one-shot: nothing was written to the shell
    expect(await metrics.render(undefined, new Set())).toMatch(/^pulumi_lvm_agent_lvm_shell_available 0$/m);
    await t.run(REPORT);
    expect(t.fake.processes).toHaveLength(1);
    now = 1000;
    answer = true;
    expect(await metrics.render(undefined, new Set())).toMatch(/^pulumi_lvm_agent_lvm_shell_available 1$/m);
    await t.run(REPORT);
    expect(t.fake.processes).toHaveLength(2);
    expect(t.routes.at(-1)).toEqual({ via: "shell", kind: "report" });
  });

  it("goes one-shot when the shell cannot be spawned", async () => {
    const t = setup();
    t.fake.failSpawn = true;
    await t.run(REPORT);
    expect(t.routes).toEqual([{ via: "one-shot", reason: "shell-down" }]);
    expect(t.shell.available).toBe(false);
  });

  it("kills the shell's group on abort and fails as an aborted command", async () => {
    const t = setup((line) => (line.startsWith("formats") ? {} : "hang"));
    const ac = new AbortController();
    const p = t.run(REPORT, { signal: ac.signal, timeoutMs: 10_000 });
    setTimeout(() => ac.abort(), 50);
    await expect(p).rejects.toMatchObject({ details: { aborted: true } });
    expect(t.ends).toEqual(["aborted"]);
  });

  it("never sends writes, pvmove, non-JSON reports or the unconfined vgs to the shell", async () => {
    const t = setup();
    const confined = createLvmRunner({
      commandPrefix: [process.execPath, "-e", ONE_SHOT_TOOL, "--"],
      devices: ["/dev/loop3"],
      shell: t.shell,
      routed: (_tool, r) => t.routes.push(r),
    });
    await confined(["pvcreate", "/dev/loop3"]);
    await confined(["pvmove", "--interval", "5", "/dev/loop3"]);
    await confined(["lvm", "fullreport", "--reportformat", "json"]); // confined, without --devices
    await confined(["vgs", "--reportformat", "json", "-o", "vg_name"], { unconfined: true });
    await confined(["pvs", "--reportformat", "basic"]);
    await confined(["lsblk", "--json", "/dev/loop3"]);
    expect(t.fake.processes).toHaveLength(0);
    expect(t.routes).toEqual([
      { via: "one-shot", reason: "stays-one-shot" },
      { via: "one-shot", reason: "stays-one-shot" },
      { via: "one-shot", reason: "stays-one-shot" },
      { via: "one-shot", reason: "unconfined" },
      { via: "one-shot", reason: "stays-one-shot" },
    ]);
  });

  it("runs a confined agent's unconfined vgs in its names shell, unfiltered, and nothing else there", async () => {
    const t = setup((line) => (line.startsWith("formats") ? {} : { report: ROWS }));
    const names = new FakeLvmShell((line) => (line.startsWith("formats") ? {} : { report: ROWS }));
    const namesShell = new LvmShell({ spawn: names.spawn, argv: ["lvm"], env: {}, startTimeoutMs: 500 });
    const confined = createLvmRunner({
      commandPrefix: [process.execPath, "-e", ONE_SHOT_TOOL, "--"],
      devices: ["/dev/loop3"],
      shell: t.shell,
      namesShell,
      routed: (_tool, r) => t.routes.push(r),
    });
    const r = await confined(["vgs", "--reportformat", "json", "-o", "vg_name"], { unconfined: true });
    expect(r.stdout).toBe(oneShotText(ROWS));
    await confined(["lvm", "fullreport", "--reportformat", "json", "--devices", "/dev/loop3"]);
    await confined(["pvs", "--reportformat", "json"]); // confined, without --devices: one-shot
    // The names shell saw the probe and the vgs alone: no --devices, no filter of the agent's devices.
    expect(names.processes).toHaveLength(1);
    expect(names.current!.lines).toEqual([
      "formats\n",
      "'vgs' '--config' 'devices { use_devicesfile=0 }' '--reportformat' 'json' '-o' 'vg_name'\n",
    ]);
    // The agent's shell never saw it.
    expect(t.fake.current!.lines.some((l) => l.startsWith("'vgs'"))).toBe(false);
    expect(t.routes).toEqual([
      { via: "shell", kind: "report" },
      { via: "shell", kind: "report" },
      { via: "one-shot", reason: "stays-one-shot" },
    ]);
    await namesShell.close();
  });

  describe("writes (--lvm-shell-writes)", () => {
    const PVCREATE = ["pvcreate", "/dev/loop3"];
    function writer(reply: ConstructorParameters<typeof FakeLvmShell>[0]) {
      const t = setup(reply);
      const run = createLvmRunner({
        commandPrefix: [process.execPath, "-e", ONE_SHOT_TOOL, "--"],
        shell: t.shell,
        shellWrites: true,
        log: (e) => t.log.push(e),
        routed: (_tool, r) => t.routes.push(r),
        timeoutMs: 20_000,
      });
      return { ...t, run };
    }

    it("answers a write in the shell with what lvm prints one-shot on stdout", async () => {
      const t = writer((line) =>
        line.startsWith("formats")
          ? {}
          : { prints: ['Physical volume \\"/dev/loop3\\" successfully created.'] },
      );
      const r = await t.run(PVCREATE);
      expect(r).toMatchObject({
        stdout: '  Physical volume "/dev/loop3" successfully created.\n',
        stderr: "",
      });
      expect(t.fake.current!.lines[1]).toMatch(/^'pvcreate' '--config' '.*' '\/dev\/loop3'\n$/);
      expect(t.routes).toEqual([{ via: "shell", kind: "write" }]);
      expect(t.log).toHaveLength(1);
      expect(t.log[0]).toMatchObject({ via: "shell", exitCode: 0, requested: PVCREATE });
    });

    it("fails a write with lvm's exit status and its messages as stderr, without running it again", async () => {
      const t = writer((line) =>
        line.startsWith("formats")
          ? {}
          : { retCode: 5, messages: ["A volume group called vg0 already exists."] },
      );
      const err = await t.run(["vgcreate", "vg0", "/dev/loop3"]).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LvmCommandError);
      expect(err).toMatchObject({ exitCode: 5, stderr: "  A volume group called vg0 already exists.\n" });
      expect((err as Error).message).toBe(
        "vgcreate vg0 /dev/loop3 exited 5: A volume group called vg0 already exists.",
      );
      expect(t.log).toHaveLength(1); // no one-shot run after it
      expect(t.routes).toEqual([{ via: "shell", kind: "write" }]);
    });

    it("runs a refused command line (lvm ran nothing) by itself, for lvm's exact usage error", async () => {
      const t = writer((line) => (line.startsWith("formats") ? {} : { retCode: 3, messages: ["bad"] }));
      await t.run(PVCREATE);
      expect(t.routes).toEqual([{ via: "one-shot", reason: "exact-error" }]);
      expect(t.log.map((e) => [e.via, e.exitCode])).toEqual([
        ["shell", 3],
        [undefined, 0],
      ]);
    });

    it("kills the shell at a prompt (lvm changed nothing yet) and runs the write by itself, where lvm reads no", async () => {
      const prompt = "WARNING: ext4 signature detected on /dev/loop3 at offset 1080. Wipe it? [y/n]: ";
      const t = writer((line): FakeReply => (line.startsWith("formats") ? {} : { prompt }));
      const r = await t.run(PVCREATE);
      expect(r.stdout).toBe(oneShotText(ROWS)); // the stand-in tool's one-shot answer
      expect(t.fake.processes[0]!.signals).toEqual(["SIGKILL"]);
      expect(t.ends).toEqual(["prompt"]);
      expect(t.routes).toEqual([{ via: "one-shot", reason: "shell-prompted" }]);
      expect(t.log[0]).toMatchObject({
        via: "shell",
        exitCode: null,
        signal: "SIGKILL",
        rerun: `lvm asked: ${prompt.trim()}`,
      });
      expect(t.log[1]!.via).toBeUndefined();
    });

    it("fails a write under which the shell died, and never runs it again (it may have taken effect)", async () => {
      const t = writer((line) => (line.startsWith("formats") ? {} : "die"));
      const err = await t.run(PVCREATE).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(LvmCommandError);
      expect(err).toMatchObject({ exitCode: null, details: { signal: "SIGKILL" } });
      expect((err as Error).message).toBe(
        "pvcreate /dev/loop3 did not finish (the lvm shell was killed by SIGKILL while it ran this write: it may or may not have taken effect, so it was not run again; the next plan shows what it did)",
      );
      expect(t.log).toHaveLength(1);
      expect(t.ends).toEqual(["died"]);
    });

    it("says a write under a shell that ended without a signal did not finish (not that it did not run)", async () => {
      const t = writer((line) => (line.startsWith("formats") ? {} : "exit"));
      const err = await t.run(PVCREATE).catch((e: unknown) => e);
      expect(err).toMatchObject({ exitCode: null, details: { unfinished: true } });
      expect((err as Error).message).toBe(
        "pvcreate /dev/loop3 did not finish (the lvm shell exited 5 while it ran this write: it may or may not have taken effect, so it was not run again; the next plan shows what it did)",
      );
    });

    it("still runs pvmove and options not checked in the shell one-shot", async () => {
      const t = writer(() => ({}));
      await t.run(["pvmove", "--interval", "1", "/dev/loop3"]);
      await t.run(["pvcreate", "--yes", "/dev/loop3"]);
      expect(t.fake.processes).toHaveLength(0);
      expect(t.routes).toEqual([
        { via: "one-shot", reason: "stays-one-shot" },
        { via: "one-shot", reason: "stays-one-shot" },
      ]);
    });
  });

  it("closes the shell: stdin ended, later reports one-shot", async () => {
    const t = setup();
    await t.run(REPORT);
    await t.shell.close();
    expect(t.fake.current!.ended).toBe(true);
    expect(t.fake.current!.alive).toBe(false);
    await t.run(REPORT);
    expect(t.routes.at(-1)).toEqual({ via: "one-shot", reason: "shell-down" });
    expect(t.ends).toEqual(["closed"]);
  });
});
