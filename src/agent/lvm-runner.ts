import { devicePathProblem } from "../agent-api/device-names";
import { execute, type Outcome } from "./command-process";
import {
  CommandRefusedError,
  checkWord,
  LVM_TOOLS,
  lvmConfigString,
  validateArgv,
  withLvmConfig,
} from "./lvm-command";
import type { LvmShell } from "./lvm-shell";
import { SHELL_WRITES, shellLine, shellRefusal } from "./lvm-shell-protocol";

export { ALLOWED_TOOLS, CommandRefusedError, LVM_TOOLS, lvmConfigString, PROBE_TOOLS } from "./lvm-command";

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
  /** "shell" when it ran in the agent's lvm shell (pid `shellPid`), not as a process of its own. */
  readonly via?: "shell";
  readonly shellPid?: number;
  /** A shell command whose answer was not used: why; the runner ran it again by itself (the next entry). */
  readonly rerun?: string;
}

/** A command about to start: logged before it runs, so a log cut short by kill -9 still names it. */
export type CommandStartEntry = Pick<
  CommandLogEntry,
  "tool" | "argv" | "requested" | "startedAt" | "via" | "shellPid"
>;

/**
 * How an lvm command was answered: in the shell (a report, or a write), or by a process of its own and
 * why (`stays-one-shot`: shellRefusal, `no-shell`, `unconfined`: the names read with no names shell,
 * `not-quotable`, `shell-busy`, `shell-down`, `exact-error`: the shell's answer to a report was a failure or had messages, or a
 * write's command line was refused, `shell-died`: the shell died under a report, `shell-prompted`: a
 * write asked a question, which only a process with its stdin closed answers "no").
 */
export type LvmRoute =
  | { readonly via: "shell"; readonly kind: "report" | "write" }
  | { readonly via: "one-shot"; readonly reason: string };

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
  /**
   * The agent's lvm shell (./lvm-shell.ts), for the reading reports shellRefusal lets through (and the
   * writes, with `shellWrites`); every other command, and every report the shell cannot answer
   * cleanly, runs one process per command.
   * @default undefined (every command one-shot)
   */
  readonly shell?: Pick<LvmShell, "run">;
  /**
   * A second lvm shell, for the one command a confined agent runs without its device filter
   * (ALL_VG_NAMES_ARGV, before each vgcreate of a new group) and nothing else. It cannot share the
   * agent's shell: lvm's shell keeps a report's `--devices` for the commands after it, and a command
   * without it then sees no device (see shellArgv); this shell never sees `--devices` nor the filter.
   * @default undefined (that read one-shot, reason "unconfined")
   */
  readonly namesShell?: Pick<LvmShell, "run">;
  /**
   * Run the plan's writes (not pvmove) in the shell too (--lvm-shell-writes): each still checked,
   * logged before and after, killed with the shell at its timeout; its exit status, stdout and stderr
   * rebuilt from lvm's command log as lvm prints them; a write that prompts runs one-shot; a write
   * under which the shell dies fails (it is never retried: it may have taken effect).
   * @default false
   */
  readonly shellWrites?: boolean;
  /** Told how each lvm command was answered (for /metrics). */
  readonly routed?: (tool: string, route: LvmRoute) => void;
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
      /** It started, and whether it finished is unknown (the lvm shell ended under a write). */
      readonly unfinished?: boolean;
    } = {},
  ) {
    super(describeFailure(argv, exitCode, stderr, details));
    this.name = "LvmCommandError";
  }
}

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

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
  const env = commandEnv(options);
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
    const words = withLvmConfig(argv, runOptions.unconfined ? unconfinedConfig : configString);
    const full = [...prefix, ...words];
    if (runOptions.signal?.aborted) throw new LvmCommandError(argv, null, "", { aborted: true });
    const tool = argv[0]!;
    const lvm = (LVM_TOOLS as readonly string[]).includes(tool);
    const commandTimeout = runOptions.timeoutMs ?? timeoutMs;
    // The unconfined read goes to the names shell only; everything else to the agent's shell.
    const shell = runOptions.unconfined ? options.namesShell : options.shell;
    let reason = runOptions.unconfined && options.shell ? "unconfined" : "no-shell";
    if (lvm && shell) {
      const line = runOptions.unconfined
        ? shellLine(withLvmConfig(argv, unconfinedConfig))
        : shellLine(withLvmConfig(shellArgv(argv, devices), configString));
      const scope = runOptions.unconfined
        ? { devices: undefined }
        : { devices, writes: options.shellWrites ?? false };
      reason =
        shellRefusal(argv, scope) !== undefined ? "stays-one-shot" : line === undefined ? "not-quotable" : "";
      if (!reason) {
        const answered = await inShell(options, shell, argv, full, line!, commandTimeout, runOptions.signal);
        if ("stdout" in answered) {
          if (!write(tool)) options.routed?.(tool, { via: "shell", kind: "report" });
          return answered;
        }
        reason = answered.reason;
      }
    }
    if (lvm) options.routed?.(tool, { via: "one-shot", reason });
    const started = Date.now();
    const startedAt = new Date(started).toISOString();
    options.logStart?.({ tool, argv: full, requested: [...argv], startedAt });
    const outcome = await execute(full, env, runOptions.signal, commandTimeout, killGraceMs, maxOutput);
    const durationMs = Date.now() - started;
    options.log?.({ ...endEntry(tool, full, argv, startedAt, durationMs, outcome) });
    if (outcome.exitCode !== 0 || outcome.cause) throw commandError(argv, outcome);
    return { argv, stdout: outcome.stdout, stderr: outcome.stderr, durationMs };
  };
}

/**
 * One command in the shell. A report's answer when clean, a write's whenever lvm answered (a failure
 * throws LvmCommandError with its exit status and stderr); a timeout or abort throws as a one-shot
 * command's would (the shell's process group was killed); otherwise why the runner must run it by
 * itself (busy or down: not run here; a report's failure or messages: for lvm's own exit status and
 * stderr; a write's refused command line or prompt: lvm ran nothing; the shell died under a report:
 * retried once, a reading report being safe to run twice). The shell dying under a write fails it:
 * it may or may not have taken effect, and only the next discovery can tell.
 */
async function inShell(
  options: LvmRunnerOptions,
  shell: Pick<LvmShell, "run">,
  argv: readonly string[],
  full: readonly string[],
  line: string,
  timeoutMs: number,
  signal: AbortSignal | undefined,
): Promise<CommandResult | { reason: string }> {
  const tool = argv[0]!;
  const started = Date.now();
  const startedAt = new Date(started).toISOString();
  let shellPid: number | undefined;
  const outcome = await shell.run(line, {
    timeoutMs,
    write: write(tool),
    ...(signal ? { signal } : {}),
    onStart: (pid) => {
      shellPid = pid;
      options.logStart?.({
        tool,
        argv: full,
        requested: [...argv],
        startedAt,
        via: "shell",
        ...(pid ? { shellPid: pid } : {}),
      });
    },
  });
  if (outcome.kind === "unavailable") return { reason: `shell-${outcome.why}` };
  const durationMs = Date.now() - started;
  const entry = (e: Partial<CommandLogEntry> & Pick<CommandLogEntry, "exitCode">): CommandLogEntry => ({
    tool,
    argv: full,
    requested: [...argv],
    startedAt,
    durationMs,
    via: "shell",
    ...(shellPid ? { shellPid } : {}),
    ...e,
  });
  switch (outcome.kind) {
    case "ok":
      options.log?.(entry({ exitCode: 0 }));
      return { argv, stdout: outcome.stdout, stderr: "", durationMs };
    case "timed-out":
    case "aborted": {
      const stopped: Outcome = {
        exitCode: null,
        stdout: "",
        stderr: outcome.stderr,
        ...(outcome.signal ? { signal: outcome.signal } : {}),
        ...(outcome.kind === "timed-out"
          ? {
              timedOut: true,
              cause: `timed out after ${timeoutMs} ms in the lvm shell (its process group was killed)`,
            }
          : { aborted: true, cause: "aborted (the lvm shell's process group was killed)" }),
      };
      options.log?.(endEntry(tool, full, argv, startedAt, durationMs, stopped, { via: "shell", shellPid }));
      throw commandError(argv, stopped);
    }
    case "wrote":
      options.log?.(entry({ exitCode: outcome.exitCode }));
      options.routed?.(tool, { via: "shell", kind: "write" });
      if (outcome.exitCode !== 0) throw new LvmCommandError(argv, outcome.exitCode, outcome.stderr);
      return { argv, stdout: outcome.stdout, stderr: outcome.stderr, durationMs };
    case "answered":
      options.log?.(entry({ exitCode: outcome.exitCode, rerun: outcome.why }));
      return { reason: "exact-error" };
    case "prompted":
      options.log?.(
        entry({ exitCode: null, signal: "SIGKILL", rerun: `lvm asked: ${outcome.prompt.trim()}` }),
      );
      return { reason: "shell-prompted" };
    case "died": {
      const how = outcome.signal ? { signal: outcome.signal } : {};
      if (write(tool)) {
        options.log?.(entry({ exitCode: null, ...how }));
        options.routed?.(tool, { via: "shell", kind: "write" });
        throw new LvmCommandError(argv, null, "", {
          ...how,
          unfinished: true,
          cause: `${outcome.why} while it ran this write: it may or may not have taken effect, so it was not run again; the next plan shows what it did`,
        });
      }
      options.log?.(entry({ exitCode: null, ...how, rerun: outcome.why }));
      if (signal?.aborted) throw new LvmCommandError(argv, null, "", { aborted: true });
      return { reason: "shell-died" };
    }
  }
}

/**
 * The argv sent to the shell: a confined agent's writes name its devices with `--devices` too. lvm's
 * shell keeps a report's `--devices` in a state in which a later command without it sees no device
 * ("device is not in devices list"), so each command of a confined agent's shell names them: the same
 * devices its filter accepts, so lvm sees what it sees one-shot.
 */
function shellArgv(argv: readonly string[], devices: readonly string[] | undefined): readonly string[] {
  if (!devices || !write(argv[0]!)) return argv;
  return [argv[0]!, "--devices", devices.join(","), ...argv.slice(1)];
}

/** A writing lvm command (the shell answers it with its output rebuilt from lvm's log). */
function write(tool: string): boolean {
  return (SHELL_WRITES as readonly string[]).includes(tool);
}

function endEntry(
  tool: string,
  full: readonly string[],
  argv: readonly string[],
  startedAt: string,
  durationMs: number,
  outcome: Outcome,
  shell?: { via: "shell"; shellPid: number | undefined },
): CommandLogEntry {
  return {
    tool,
    argv: full,
    requested: [...argv],
    startedAt,
    durationMs,
    exitCode: outcome.exitCode,
    ...(outcome.signal ? { signal: outcome.signal } : {}),
    ...(outcome.timedOut ? { timedOut: true } : {}),
    ...(outcome.aborted ? { aborted: true } : {}),
    ...(shell ? { via: "shell" as const, ...(shell.shellPid ? { shellPid: shell.shellPid } : {}) } : {}),
  };
}

function commandError(argv: readonly string[], outcome: Outcome): LvmCommandError {
  return new LvmCommandError(argv, outcome.exitCode, outcome.stderr, {
    ...(outcome.signal ? { signal: outcome.signal } : {}),
    ...(outcome.timedOut ? { timedOut: true } : {}),
    ...(outcome.aborted ? { aborted: true } : {}),
    ...(outcome.cause ? { cause: outcome.cause } : {}),
  });
}

/** The environment of every command (and of the lvm shell, with its own LVM_SYSTEM_DIR). */
export function commandEnv(options: Pick<LvmRunnerOptions, "path" | "lvmSystemDir">): NodeJS.ProcessEnv {
  return {
    PATH: options.path ?? DEFAULT_PATH,
    LC_ALL: "C",
    LVM_SUPPRESS_FD_WARNINGS: "1",
    ...(options.lvmSystemDir ? { LVM_SYSTEM_DIR: options.lvmSystemDir } : {}),
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

function describeFailure(
  argv: readonly string[],
  exitCode: number | null,
  stderr: string,
  details: { signal?: string; timedOut?: boolean; aborted?: boolean; cause?: string; unfinished?: boolean },
): string {
  const how = details.timedOut
    ? "timed out"
    : details.aborted
      ? "was aborted"
      : exitCode === null && (details.signal || details.unfinished) && details.cause
        ? `did not finish (${details.cause})`
        : exitCode === null
          ? `did not run (${details.cause ?? details.signal ?? "unknown"})`
          : `exited ${exitCode}`;
  const err = stderr.trim();
  return `${argv.join(" ")} ${how}${err ? `: ${err}` : ""}`;
}
