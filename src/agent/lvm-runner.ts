import { devicePathProblem } from "../agent-api/device-names";
import { execute } from "./command-process";
import {
  CommandRefusedError,
  checkWord,
  LVM_TOOLS,
  lvmConfigString,
  usesHostDevicesFile,
  validateArgv,
  withLvmConfig,
} from "./lvm-command";
import type { LvmShell } from "./lvm-shell";
import { isShellWrite, shellLine, shellRefusal } from "./lvm-shell-protocol";
import {
  commandError,
  LvmCommandError,
  endEntry,
  type CommandLogEntry,
  type CommandResult,
  type CommandStartEntry,
} from "./lvm-result";
import { inShell, shellArgv, type LvmRoute } from "./lvm-runner-shell";

export type { LvmRoute } from "./lvm-runner-shell";

export {
  ALLOWED_TOOLS,
  CommandRefusedError,
  DEVICES_FILE_CONFIG_ARGV,
  LVM_TOOLS,
  lvmConfigString,
  PROBE_TOOLS,
} from "./lvm-command";
export {
  LvmCommandError,
  type CommandLogEntry,
  type CommandResult,
  type CommandStartEntry,
} from "./lvm-result";

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
   * @default "" (the filter and `devices/use_devicesfile=0` are always set, but for the commands of the
   * host's devices file, see usesHostDevicesFile)
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

/** Runs one command given as an argv array; throws LvmCommandError unless it exits 0. */
export type Runner = (argv: readonly string[], options?: RunOptions) => Promise<CommandResult>;

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
  const devicesFileConfig = lvmConfigString(devices, options.lvmConfig ?? "", true);
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
    const words = withLvmConfig(
      argv,
      runOptions.unconfined ? unconfinedConfig : usesHostDevicesFile(argv) ? devicesFileConfig : configString,
    );
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
          if (!isShellWrite(tool)) options.routed?.(tool, { via: "shell", kind: "report" });
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

/** The environment of every command (and of the lvm shell, with its own LVM_SYSTEM_DIR). */
export function commandEnv(options: Pick<LvmRunnerOptions, "path" | "lvmSystemDir">): NodeJS.ProcessEnv {
  return {
    PATH: options.path ?? DEFAULT_PATH,
    LC_ALL: "C",
    LVM_SUPPRESS_FD_WARNINGS: "1",
    ...(options.lvmSystemDir ? { LVM_SYSTEM_DIR: options.lvmSystemDir } : {}),
  };
}
