import type { Outcome } from "./command-process";

// What one command left behind: its log entries, its result, or its error. Shared by the runner's
// one-shot path (lvm-runner.ts) and its shell path (lvm-runner-shell.ts).

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

export interface CommandResult {
  readonly argv: readonly string[];
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
}

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

/** The log entry of a command that ended with `outcome`. */
export function endEntry(
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

/** The error of a command that ended with `outcome` and did not exit 0. */
export function commandError(argv: readonly string[], outcome: Outcome): LvmCommandError {
  return new LvmCommandError(argv, outcome.exitCode, outcome.stderr, {
    ...(outcome.signal ? { signal: outcome.signal } : {}),
    ...(outcome.timedOut ? { timedOut: true } : {}),
    ...(outcome.aborted ? { aborted: true } : {}),
    ...(outcome.cause ? { cause: outcome.cause } : {}),
  });
}

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
          : details.cause
            ? // stopped for a cause (its output over the limit) as it was ending: the exit code alone
              // would read as success
              `failed (${details.cause}), exit ${exitCode}`
            : `exited ${exitCode}`;
  const err = stderr.trim();
  return `${argv.join(" ")} ${how}${err ? `: ${err}` : ""}`;
}
