import {
  CommandRefusedError,
  createLvmRunner,
  DEVICES_FILE_CONFIG_ARGV,
  lvmConfigString,
  LvmCommandError,
  type CommandLogEntry,
  type LvmRunnerOptions,
} from "./lvm-runner";

/**
 * The runner is tested against a stand-in tool: the command prefix is `node -e <script> --`, so the
 * "tool" that runs is a small script that prints its argv and environment (or misbehaves on request).
 * No lvm is needed; what the runner hands to the kernel is exactly what the script sees.
 */
const FAKE_TOOL = `
const args = process.argv.slice(1);
if (args.includes("--fail")) { process.stderr.write("  Cannot do that\\n"); process.exit(5); }
else if (args.includes("--sleep")) setTimeout(() => {}, 60000);
else if (args.includes("--flood")) process.stdout.write("x".repeat(4096));
else process.stdout.write(JSON.stringify({ args, env: process.env }));
`;

function runner(extra: Partial<LvmRunnerOptions> = {}, log: CommandLogEntry[] = []) {
  return createLvmRunner({
    commandPrefix: [process.execPath, "-e", FAKE_TOOL, "--"],
    log: (e) => log.push(e),
    ...extra,
  });
}

async function seen(argv: string[], extra: Partial<LvmRunnerOptions> = {}) {
  const r = await runner(extra)(argv);
  return JSON.parse(r.stdout) as { args: string[]; env: Record<string, string> };
}

describe("createLvmRunner: what runs", () => {
  it("passes argv as an array, with --config right after the lvm tool", async () => {
    const { args } = await seen(["pvcreate", "/dev/loop3"]);
    expect(args).toEqual(["pvcreate", "--config", lvmConfigString(undefined, ""), "/dev/loop3"]);
  });

  it("puts --config after the subcommand of `lvm`", async () => {
    const { args } = await seen(["lvm", "fullreport", "--reportformat", "json"]);
    expect(args.slice(0, 3)).toEqual(["lvm", "fullreport", "--config"]);
  });

  it("gives wipefs, lsblk and blkid no --config", async () => {
    const { args } = await seen(["wipefs", "--json", "--no-act", "/dev/loop3"]);
    expect(args).toEqual(["wipefs", "--json", "--no-act", "/dev/loop3"]);
  });

  it("keeps shell metacharacters literal: there is no shell", async () => {
    const { args } = await seen(["vgs", "$(touch /tmp/pwned); `id` | cat"]);
    expect(args.at(-1)).toBe("$(touch /tmp/pwned); `id` | cat");
  });

  it("runs with a minimal environment: LC_ALL=C, LVM_SUPPRESS_FD_WARNINGS=1, nothing of the agent's", async () => {
    process.env.AGENT_SECRET_FOR_TEST = "do-not-leak";
    try {
      const { env } = await seen(["vgs"], { lvmSystemDir: "/var/tmp/agent-lvm" });
      expect(env.LC_ALL).toBe("C");
      expect(env.LVM_SUPPRESS_FD_WARNINGS).toBe("1");
      expect(env.LVM_SYSTEM_DIR).toBe("/var/tmp/agent-lvm");
      expect(env.AGENT_SECRET_FOR_TEST).toBeUndefined();
    } finally {
      delete process.env.AGENT_SECRET_FOR_TEST;
    }
  });

  it("restricts lvm to the agent's devices with a filter and global_filter", async () => {
    const { args } = await seen(["pvs"], { devices: ["/dev/loop3", "/dev/disk/by-id/wwn-0x5.1+a"] });
    const config = args[2]!;
    expect(config).toContain('filter=["a|^/dev/loop3$|","a|^/dev/disk/by-id/wwn-0x5[.]1[+]a$|","r|.*|"]');
    expect(config).toContain("global_filter=");
    expect(config).toContain("use_devicesfile=0");
  });
});

describe("createLvmRunner: the host's devices file", () => {
  it("runs lvm lvmdevices and the devices-file settings read with the host's devices file, keeping the filter", async () => {
    const devices = ["/dev/loop3"];
    for (const argv of [
      ["lvm", "lvmdevices", "--adddev", "/dev/loop3"],
      ["lvm", "lvmdevices", "--deldev", "/dev/loop3"],
      ["lvm", "lvmdevices"],
      [...DEVICES_FILE_CONFIG_ARGV],
    ]) {
      const { args } = await seen(argv, { devices });
      expect(args.slice(0, 3)).toEqual([argv[0], argv[1], "--config"]);
      expect(args[3]).not.toContain("use_devicesfile");
      expect(args[3]).toContain('filter=["a|^/dev/loop3$|","r|.*|"]');
    }
  });

  it("gives an unconfined agent's lvmdevices no --config at all (lvm refuses an empty one)", async () => {
    const { args } = await seen(["lvm", "lvmdevices", "--adddev", "/dev/loop3"]);
    expect(args).toEqual(["lvm", "lvmdevices", "--adddev", "/dev/loop3"]);
  });

  it("keeps use_devicesfile=0 for every other command, `lvm config` of other settings included", async () => {
    for (const argv of [
      ["pvcreate", "/dev/loop3"],
      ["lvm", "config", "--type", "full", "devices/use_devicesfile"],
      ["lvm", "fullreport"],
    ])
      expect((await seen(argv)).args).toContain(lvmConfigString(undefined, ""));
  });

  it("refuses lvmdevices on a device that is not the agent's", async () => {
    await expect(
      runner({ devices: ["/dev/loop3"] })(["lvm", "lvmdevices", "--adddev", "/dev/sda"]),
    ).rejects.toThrow(/not one of this agent's devices/);
  });
});

describe("lvmConfigString", () => {
  it("always turns the devices file off, adds the filter only when restricted, and appends extra settings", () => {
    expect(lvmConfigString(undefined, "")).toBe("devices { use_devicesfile=0 }");
    expect(lvmConfigString(["/dev/loop1"], "global { use_lvmpolld=0 }")).toBe(
      'devices { use_devicesfile=0 filter=["a|^/dev/loop1$|","r|.*|"] global_filter=["a|^/dev/loop1$|","r|.*|"] } global { use_lvmpolld=0 }',
    );
  });
});

describe("createLvmRunner: refusals (nothing runs)", () => {
  const cases: Array<[string, unknown[], RegExp]> = [
    ["an empty argv", [], /non-empty/],
    ["a tool not on the allow-list", ["rm", "-rf", "/"], /not one of/],
    ["a path as argv[0]", ["/usr/sbin/pvcreate", "/dev/loop3"], /not one of/],
    ["a NUL byte", ["pvs", "a\0b"], /NUL/],
    ["a non-string", ["pvs", 5], /not a string/],
    ["--config from the caller", ["pvs", "--config", 'devices{filter=["a|.*|"]}'], /set by the runner only/],
    ["an abbreviation of --config", ["pvs", "--conf=x"], /set by the runner only/],
    ["a device path with ..", ["pvcreate", "/dev/../etc/passwd"], /\.\. segment/],
    ["a device path with metacharacters", ["pvcreate", "/dev/sdb;reboot"], /characters other than/],
  ];
  it.each(cases)("refuses %s", async (_what, argv, message) => {
    const log: CommandLogEntry[] = [];
    await expect(runner({}, log)(argv as string[])).rejects.toThrow(message);
    await expect(runner({}, log)(argv as string[])).rejects.toBeInstanceOf(CommandRefusedError);
    expect(log).toEqual([]);
  });

  it("refuses devices outside the allow-list, in any tool, also inside a comma list", async () => {
    const log: CommandLogEntry[] = [];
    const run = runner({ devices: ["/dev/loop3"] }, log);
    await expect(run(["pvcreate", "/dev/loop4"])).rejects.toThrow(/not one of this agent's devices/);
    await expect(run(["wipefs", "--all", "/dev/loop30"])).rejects.toThrow(/not one of this agent's devices/);
    await expect(run(["lvm", "fullreport", "--devices", "/dev/loop3,/dev/sda"])).rejects.toThrow(
      /\/dev\/sda is not one/,
    );
    expect(log).toEqual([]);
  });

  it("allows partitions of allowed devices and comma lists of allowed devices", async () => {
    const run = runner({ devices: ["/dev/loop3", "/dev/sdb"] });
    await expect(run(["wipefs", "--json", "--no-act", "/dev/loop3p1"])).resolves.toBeDefined();
    await expect(run(["blkid", "-p", "/dev/sdb2"])).resolves.toBeDefined();
    await expect(run(["lvm", "fullreport", "--devices", "/dev/loop3,/dev/sdb"])).resolves.toBeDefined();
  });

  it("makes probe tools name their devices when restricted (a bare lsblk would list every disk)", async () => {
    await expect(runner({ devices: ["/dev/loop3"] })(["lsblk", "--json"])).rejects.toThrow(
      /must name its devices/,
    );
  });

  it("refuses an invalid allow-list or prefix up front", () => {
    expect(() => createLvmRunner({ devices: ["/dev/loop3", "sdb"] })).toThrow(/not under \/dev/);
    expect(() => createLvmRunner({ commandPrefix: ["nsenter", "a\0"] })).toThrow(/NUL/);
  });
});

describe("createLvmRunner: failures", () => {
  it("throws LvmCommandError with the argv as requested, the exit code and stderr", async () => {
    const log: CommandLogEntry[] = [];
    const err = await runner({}, log)(["vgremove", "vg0", "--fail"]).catch((e) => e);
    expect(err).toBeInstanceOf(LvmCommandError);
    expect(err.argv).toEqual(["vgremove", "vg0", "--fail"]);
    expect(err.exitCode).toBe(5);
    expect(err.stderr).toContain("Cannot do that");
    expect(err.message).toBe("vgremove vg0 --fail exited 5: Cannot do that");
    expect(log).toHaveLength(1);
    expect(log[0]).toMatchObject({ tool: "vgremove", exitCode: 5, requested: ["vgremove", "vg0", "--fail"] });
  });

  it("kills a command that runs past its timeout", async () => {
    const err = await runner({ timeoutMs: 300, killGraceMs: 200 })(["pvmove", "--sleep"]).catch((e) => e);
    expect(err).toBeInstanceOf(LvmCommandError);
    expect(err.details.timedOut).toBe(true);
    expect(err.message).toMatch(/timed out/);
  });

  it("stops a command when its AbortSignal fires, and does not start one whose signal already fired", async () => {
    const log: CommandLogEntry[] = [];
    const run = runner({ killGraceMs: 200 }, log);
    const ac = new AbortController();
    setTimeout(() => ac.abort(), 200);
    const err = await run(["pvs", "--sleep"], { signal: ac.signal }).catch((e) => e);
    expect(err.details.aborted).toBe(true);
    expect(log).toHaveLength(1);
    await expect(run(["pvs"], { signal: ac.signal })).rejects.toThrow(/aborted/);
    expect(log).toHaveLength(1);
  });

  it("fails a command whose output exceeds the limit", async () => {
    await expect(runner({ maxOutputBytes: 1000 })(["lsblk", "--flood"])).rejects.toThrow(
      /exceeded 1000 bytes/,
    );
  });

  it("names the cause of a failure even when the command exited 0 before it was stopped (a race: the output limit is hit as the command ends)", () => {
    const err = new LvmCommandError(["lsblk", "--flood"], 0, "", { cause: "stdout exceeded 1000 bytes" });
    expect(err.message).toBe("lsblk --flood failed (stdout exceeded 1000 bytes), exit 0");
  });

  it("reports a tool that cannot be started", async () => {
    const run = createLvmRunner({ commandPrefix: ["/nonexistent/prefix-tool"] });
    const err = await run(["pvs"]).catch((e) => e);
    expect(err).toBeInstanceOf(LvmCommandError);
    expect(err.exitCode).toBeNull();
    expect(err.message).toMatch(/did not run \(.*ENOENT/);
  });
});

describe("createLvmRunner: the command log", () => {
  it("records every command executed, as executed, with its duration", async () => {
    const log: CommandLogEntry[] = [];
    await runner({ devices: ["/dev/loop9"] }, log)(["pvs", "/dev/loop9"]);
    expect(log).toHaveLength(1);
    expect(log[0]!.tool).toBe("pvs");
    expect(log[0]!.argv.slice(-4)).toEqual([
      "pvs",
      "--config",
      expect.stringContaining("/dev/loop9"),
      "/dev/loop9",
    ]);
    expect(log[0]!.exitCode).toBe(0);
    expect(log[0]!.durationMs).toBeGreaterThanOrEqual(0);
  });
});
