import { devicePathProblem } from "../agent-api/device-names";
import { spawn } from "node:child_process";

/** The tools the agent may run, and nothing else. argv[0] must be one of these bare names. */
export const LVM_TOOLS = [
  "lvm",
  "pvs",
  "vgs",
  "lvs",
  "pvcreate",
  "pvremove",
  "pvmove",
  "vgcreate",
  "vgextend",
  "vgreduce",
  "vgremove",
  "lvcreate",
  "lvextend",
  "lvremove",
  "lvchange",
  "pvchange",
] as const;
export const PROBE_TOOLS = ["wipefs", "lsblk", "blkid"] as const;
export const ALLOWED_TOOLS: readonly string[] = [...LVM_TOOLS, ...PROBE_TOOLS];

/** One command the runner executed, as it was executed (prefix and --config included). */
export interface CommandLogEntry {
  readonly tool: string;
  /** The full argv given to the kernel, prefix included. */
  readonly argv: readonly string[];
  /** The argv the caller asked for, before the runner added the prefix and lvm config. */
  readonly requested: readonly string[];
  readonly startedAt: string;
  readonly durationMs: number;
  /** null when the process did not exit normally (signal, spawn failure). */
  readonly exitCode: number | null;
  readonly signal?: string;
  readonly timedOut?: boolean;
  readonly aborted?: boolean;
}

/** A command about to start: logged before it runs, so a log cut short by kill -9 still names it. */
export type CommandStartEntry = Pick<CommandLogEntry, "tool" | "argv" | "requested" | "startedAt">;

export interface LvmRunnerOptions {
  /**
   * Words put before every command, e.g. to run it in the host's namespaces from a pod.
   * @default [] (run directly)
   * @example ["nsenter", "-t", "1", "-m", "-u", "-i", "-n", "-p", "--"]
   */
  readonly commandPrefix?: readonly string[];
  /**
   * The only devices this agent may see and touch. When set, every lvm command gets a devices
   * filter and global_filter accepting exactly these paths (so several agents on one machine each
   * see only their own devices), and any `/dev/...` argument of any tool must be one of them.
   * @default undefined (every device the host has; production, one agent per node)
   * @example ["/dev/loop3", "/dev/loop4"]
   */
  readonly devices?: readonly string[];
  /**
   * Extra lvm configuration added to every lvm command's `--config` string.
   * @default "" (the filter and `devices/use_devicesfile=0` are always set)
   * @example "activation { udev_sync=0 udev_rules=0 monitoring=0 } global { use_lvmpolld=0 }"
   */
  readonly lvmConfig?: string;
  /** LVM_SYSTEM_DIR for lvm commands (where lvm.conf, archive/ and backup/ live). @default lvm's own (/etc/lvm) */
  readonly lvmSystemDir?: string;
  /** Kill a command that runs longer than this. @default 120000 */
  readonly timeoutMs?: number;
  /** After a timeout or abort, SIGKILL a command that has not exited on SIGTERM within this. @default 5000 */
  readonly killGraceMs?: number;
  /** PATH of the commands. @default "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin" */
  readonly path?: string;
  /** Output beyond this many bytes per stream fails the command. @default 64 MiB */
  readonly maxOutputBytes?: number;
  /** Receives every command executed, after it ends. */
  readonly log?: (entry: CommandLogEntry) => void;
  /**
   * Receives every command right before it starts (synchronously: what it records is written before
   * the command can change anything). A start without an end is the command that ran at a crash.
   */
  readonly logStart?: (entry: CommandStartEntry) => void;
}

export interface RunOptions {
  readonly signal?: AbortSignal;
  /** @default the runner's timeoutMs */
  readonly timeoutMs?: number;
  /**
   * Run without the --devices filter. Only for ALL_VG_NAMES_ARGV (the names of every volume group on
   * the machine, to keep a confined agent from creating a name another tenant uses); refused otherwise.
   */
  readonly unconfined?: boolean;
}

/** The one command a confined agent runs unconfined: volume group names, nothing else of the others. */
export const ALL_VG_NAMES_ARGV: readonly string[] = ["vgs", "--reportformat", "json", "-o", "vg_name"];

export interface CommandResult {
  readonly argv: readonly string[];
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

/** Runs one command given as an argv array; throws LvmCommandError unless it exits 0. */
export type Runner = (argv: readonly string[], options?: RunOptions) => Promise<CommandResult>;

/** A command that ran (or failed to start) and did not exit 0. */
export class LvmCommandError extends Error {
  constructor(
    /** The argv as requested (no prefix, no --config): what a person would type. */
    readonly argv: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
    readonly details: {
      readonly signal?: string;
      readonly timedOut?: boolean;
      readonly aborted?: boolean;
      readonly cause?: string;
    } = {},
  ) {
    super(describeFailure(argv, exitCode, stderr, details));
    this.name = "LvmCommandError";
  }
}

/** A command the runner refused to start: not allowed, malformed, or naming a device outside the allow-list. */
export class CommandRefusedError extends Error {
  constructor(
    readonly argv: readonly unknown[],
    readonly reason: string,
  ) {
    super(`refused to run ${JSON.stringify(argv)}: ${reason}`);
    this.name = "CommandRefusedError";
  }
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const MAX_ARG_LENGTH = 64 * 1024;

/**
 * The one function that runs lvm, wipefs, lsblk and blkid. argv arrays only (never a shell), a
 * minimal environment (`LC_ALL=C`, `LVM_SUPPRESS_FD_WARNINGS=1`, no secrets of the agent), stdin
 * closed (so lvm's prompts answer "no"), a timeout and an AbortSignal, and a log of every command.
 */
export function createLvmRunner(options: LvmRunnerOptions = {}): Runner {
  const prefix = [...(options.commandPrefix ?? [])];
  prefix.forEach((word, i) => checkWord(prefix, word, `command prefix word ${i}`));
  const devices = options.devices ? [...options.devices] : undefined;
  devices?.forEach((d) => {
    const problem = devicePathProblem(d);
    if (problem) throw new CommandRefusedError(devices, `device ${JSON.stringify(d)} ${problem}`);
  });
  const configString = lvmConfigString(devices, options.lvmConfig ?? "");
  const unconfinedConfig = lvmConfigString(undefined, options.lvmConfig ?? "");
  const env: NodeJS.ProcessEnv = {
    PATH: options.path ?? DEFAULT_PATH,
    LC_ALL: "C",
    LVM_SUPPRESS_FD_WARNINGS: "1",
    ...(options.lvmSystemDir ? { LVM_SYSTEM_DIR: options.lvmSystemDir } : {}),
  };
  const timeoutMs = options.timeoutMs ?? 120_000;
  const killGraceMs = options.killGraceMs ?? 5000;
  const maxOutput = options.maxOutputBytes ?? 64 * 1024 * 1024;

  return async (argv, runOptions = {}) => {
    validateArgv(argv, devices);
    if (runOptions.unconfined && JSON.stringify(argv) !== JSON.stringify(ALL_VG_NAMES_ARGV))
      throw new CommandRefusedError(
        argv,
        `only ${ALL_VG_NAMES_ARGV.join(" ")} may run without the device filter`,
      );
    const full = [...prefix, ...withLvmConfig(argv, runOptions.unconfined ? unconfinedConfig : configString)];
    if (runOptions.signal?.aborted) throw new LvmCommandError(argv, null, "", { aborted: true });
    const started = Date.now();
    const startedAt = new Date(started).toISOString();
    options.logStart?.({ tool: argv[0]!, argv: full, requested: [...argv], startedAt });
    const outcome = await execute(
      full,
      env,
      runOptions.signal,
      runOptions.timeoutMs ?? timeoutMs,
      killGraceMs,
      maxOutput,
    );
    const durationMs = Date.now() - started;
    options.log?.({
      tool: argv[0]!,
      argv: full,
      requested: [...argv],
      startedAt,
      durationMs,
      exitCode: outcome.exitCode,
      ...(outcome.signal ? { signal: outcome.signal } : {}),
      ...(outcome.timedOut ? { timedOut: true } : {}),
      ...(outcome.aborted ? { aborted: true } : {}),
    });
    if (outcome.exitCode !== 0 || outcome.cause) {
      throw new LvmCommandError(argv, outcome.exitCode, outcome.stderr, {
        ...(outcome.signal ? { signal: outcome.signal } : {}),
        ...(outcome.timedOut ? { timedOut: true } : {}),
        ...(outcome.aborted ? { aborted: true } : {}),
        ...(outcome.cause ? { cause: outcome.cause } : {}),
      });
    }
    return { argv, stdout: outcome.stdout, stderr: outcome.stderr, durationMs };
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

interface Outcome {
  exitCode: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
  aborted?: boolean;
  cause?: string;
}

function execute(
  argv: readonly string[],
  env: NodeJS.ProcessEnv,
  signal: AbortSignal | undefined,
  timeoutMs: number,
  killGraceMs: number,
  maxOutput: number,
): Promise<Outcome> {
  return new Promise((resolve) => {
    // Its own process group: a timeout or abort kills the command and everything it started
    // (`nsenter -p` forks; a wrapper's children), not only the direct child.
    const child = spawn(argv[0]!, argv.slice(1), {
      env,
      stdio: ["ignore", "pipe", "pipe"],
      shell: false,
      detached: true,
    });
    const killGroup = (sig: NodeJS.Signals) => {
      try {
        if (child.pid) process.kill(-child.pid, sig);
      } catch {
        /* the group is gone */
      }
    };
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let outBytes = 0;
    let errBytes = 0;
    let timedOut = false;
    let aborted = false;
    let cause: string | undefined;
    let killTimer: NodeJS.Timeout | undefined;
    let stopping = false;
    const stop = () => {
      stopping = true;
      killGroup("SIGTERM");
      killTimer ??= setTimeout(() => killGroup("SIGKILL"), killGraceMs);
    };
    const timer = setTimeout(() => {
      timedOut = true;
      stop();
    }, timeoutMs);
    const onAbort = () => {
      aborted = true;
      stop();
    };
    signal?.addEventListener("abort", onAbort, { once: true });
    const collect = (chunks: Buffer[], which: "stdout" | "stderr") => (chunk: Buffer) => {
      const total = which === "stdout" ? (outBytes += chunk.length) : (errBytes += chunk.length);
      if (total > maxOutput) {
        cause ??= `${which} exceeded ${maxOutput} bytes`;
        stop();
        return;
      }
      chunks.push(chunk);
    };
    child.stdout.on("data", collect(out, "stdout"));
    child.stderr.on("data", collect(err, "stderr"));
    let spawnFailed = false;
    child.on("error", (e) => {
      spawnFailed = true;
      cause ??= e.message;
    });
    // After the command exits, its output pipes may still be held by processes it started. Once it
    // was stopped (timeout, abort), those are killed with the group and the pipes are not waited for;
    // otherwise they get a moment to close.
    let exited: { code: number | null; sig: NodeJS.Signals | null } | undefined;
    let settled = false;
    child.on("exit", (code, sig) => {
      exited = { code, sig };
      if (stopping) killGroup("SIGKILL");
      setTimeout(
        () => {
          child.stdout.destroy();
          child.stderr.destroy();
          finish(code, sig);
        },
        stopping ? 100 : 2000,
      ).unref();
    });
    const finish = (code: number | null, sig: NodeJS.Signals | null) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (killTimer) clearTimeout(killTimer);
      signal?.removeEventListener("abort", onAbort);
      resolve({
        exitCode: spawnFailed ? null : code,
        ...(sig ? { signal: sig } : {}),
        stdout: Buffer.concat(out).toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        ...(timedOut ? { timedOut, cause: cause ?? `timed out after ${timeoutMs} ms` } : {}),
        ...(aborted ? { aborted, cause: cause ?? "aborted" } : {}),
        ...(cause && !timedOut && !aborted ? { cause } : {}),
      });
    };
    child.on("close", (code, sig) => finish(exited?.code ?? code, exited?.sig ?? sig));
  });
}

function validateArgv(
  argv: readonly unknown[],
  devices: readonly string[] | undefined,
): asserts argv is string[] {
  if (!Array.isArray(argv) || argv.length === 0)
    throw new CommandRefusedError(argv ?? [], "argv must be a non-empty array");
  argv.forEach((word, i) => checkWord(argv, word, `argument ${i}`));
  const tool = argv[0] as string;
  if (!ALLOWED_TOOLS.includes(tool))
    throw new CommandRefusedError(
      argv,
      `argv[0] ${JSON.stringify(tool)} is not one of ${ALLOWED_TOOLS.join(", ")}`,
    );
  for (const word of argv.slice(1) as string[]) {
    // getopt accepts unambiguous prefixes of long options: refuse every spelling of --config.
    if (word.startsWith("--conf"))
      throw new CommandRefusedError(argv, `${word}: lvm configuration is set by the runner only`);
    if (!word.startsWith("/dev/")) continue;
    // A list such as lvm's `--devices /dev/a,/dev/b` is checked device by device.
    for (const device of word.split(",")) {
      const problem = devicePathProblem(device);
      if (problem) throw new CommandRefusedError(argv, `device ${JSON.stringify(device)} ${problem}`);
      if (devices && !devices.some((d) => device === d || isPartitionOf(device, d)))
        throw new CommandRefusedError(
          argv,
          `device ${device} is not one of this agent's devices (${devices.join(", ")})`,
        );
    }
  }
  if (
    devices &&
    (PROBE_TOOLS as readonly string[]).includes(tool) &&
    !argv.slice(1).some((w) => (w as string).startsWith("/dev/"))
  )
    throw new CommandRefusedError(
      argv,
      `${tool} must name its devices when the agent is restricted to ${devices.join(", ")}`,
    );
}

function checkWord(argv: readonly unknown[], word: unknown, what: string): void {
  if (typeof word !== "string") throw new CommandRefusedError(argv, `${what} is not a string`);
  if (word.includes("\0")) throw new CommandRefusedError(argv, `${what} contains a NUL byte`);
  if (word.length > MAX_ARG_LENGTH)
    throw new CommandRefusedError(argv, `${what} is longer than ${MAX_ARG_LENGTH} characters`);
}

/** "/dev/sdb1" of "/dev/sdb", "/dev/loop3p1" of "/dev/loop3", "/dev/nvme0n1p2" of "/dev/nvme0n1". */
function isPartitionOf(device: string, disk: string): boolean {
  return (
    device.startsWith(disk) &&
    /^p?\d+$/.test(device.slice(disk.length)) &&
    (/\d$/.test(disk) ? device[disk.length] === "p" : true)
  );
}

/** lvm commands take the config after the command name (`lvm fullreport --config ...` after the subcommand). */
function withLvmConfig(argv: readonly string[], configString: string): string[] {
  const tool = argv[0]!;
  if (!(LVM_TOOLS as readonly string[]).includes(tool)) return [...argv];
  const at = tool === "lvm" ? Math.min(2, argv.length) : 1;
  return [...argv.slice(0, at), "--config", configString, ...argv.slice(at)];
}

/**
 * The `--config` string: a filter and global_filter accepting exactly `devices` (rejecting
 * everything else), the devices file off (so the host's /etc/lvm/devices/system.devices does not
 * decide), and any extra settings.
 */
export function lvmConfigString(devices: readonly string[] | undefined, extra: string): string {
  const parts = ["use_devicesfile=0"];
  if (devices) {
    const accept = devices.map((d) => `"a|^${regexLiteral(d)}$|"`);
    const list = `[${[...accept, '"r|.*|"'].join(",")}]`;
    parts.push(`filter=${list}`, `global_filter=${list}`);
  }
  return [`devices { ${parts.join(" ")} }`, extra.trim()].filter(Boolean).join(" ");
}

/** A device path as an lvm filter regex that matches only itself: metacharacters as one-character classes. */
function regexLiteral(devicePath: string): string {
  return devicePath.replace(/[.+]/g, (c) => `[${c}]`);
}

function describeFailure(
  argv: readonly string[],
  exitCode: number | null,
  stderr: string,
  details: { signal?: string; timedOut?: boolean; aborted?: boolean; cause?: string },
): string {
  const how = details.timedOut
    ? "timed out"
    : details.aborted
      ? "was aborted"
      : exitCode === null
        ? `did not run (${details.cause ?? details.signal ?? "unknown"})`
        : `exited ${exitCode}`;
  const err = stderr.trim();
  return `${argv.join(" ")} ${how}${err ? `: ${err}` : ""}`;
}
