import type { Outcome } from "./command-process";
import type { LvmShell } from "./lvm-shell";
import { isShellWrite } from "./lvm-shell-protocol";
import {
  commandError,
  endEntry,
  LvmCommandError,
  type CommandLogEntry,
  type CommandResult,
  type CommandStartEntry,
} from "./lvm-result";

// The runner's shell path: one command in the agent's lvm shell (or the names shell), and what the
// runner does next when the shell's answer cannot be used. The one-shot path is lvm-runner.ts.

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

/** The runner's hooks (LvmRunnerOptions) the shell path calls. */
export interface ShellPathHooks {
  readonly log?: (entry: CommandLogEntry) => void;
  readonly logStart?: (entry: CommandStartEntry) => void;
  readonly routed?: (tool: string, route: LvmRoute) => void;
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
export async function inShell(
  options: ShellPathHooks,
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
    write: isShellWrite(tool),
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
      if (isShellWrite(tool)) {
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
export function shellArgv(
  argv: readonly string[],
  devices: readonly string[] | undefined,
): readonly string[] {
  if (!devices || !isShellWrite(argv[0]!)) return argv;
  return [argv[0]!, "--devices", devices.join(","), ...argv.slice(1)];
}
