import { spawn } from "node:child_process";
import {
  EINVALID_CMD_LINE,
  exitStatusOf,
  isPrompt,
  parseShellAnswer,
  writeOutput,
  type ShellAnswer,
} from "./lvm-shell-protocol";

/**
 * One long-lived `lvm` shell for the agent's reading reports, and its writes when told to (issue 18;
 * docs/lvm-performance.md):
 * commands on stdin, answers delimited by the command log on LVM_REPORT_FD (./lvm-shell-protocol.ts).
 * The runner decides what may run here and logs each command; this file only runs the process:
 *
 * - one command at a time: while a command runs, `run` answers "busy" and the runner runs the next
 *   report by itself (no queue, so a hung report delays nothing else);
 * - started on first use and checked with a harmless command (`formats`) before any report: a shell
 *   that does not start or answer is "down" for `retryAfterMs`, and every report runs one-shot;
 * - a command past its timeout, or aborted, kills the shell's whole process group (SIGTERM, then
 *   SIGKILL after the grace), as the runner does to a one-shot command; the next report starts a new
 *   shell. A shell that dies (killed, exited, or wrote what is not an answer) is started again on next
 *   use; the command that was in it is reported "died" (the runner re-runs it once by itself).
 */
export interface LvmShellOptions {
  /** Starts the shell process (real: spawnLvmShellProcess; tests: a stand-in). */
  readonly spawn: SpawnShell;
  /** The shell's argv: the runner's command prefix, then `lvm`. */
  readonly argv: readonly string[];
  /** Its environment: the runner's, with LVM_SYSTEM_DIR the shell's own copy (LVM_REPORT_FD is added). */
  readonly env: NodeJS.ProcessEnv;
  /** SIGKILL the group when it has not exited this long after SIGTERM. @default 5000 */
  readonly killGraceMs?: number;
  /** A new shell must answer its first command within this. @default 10000 */
  readonly startTimeoutMs?: number;
  /** After a shell failed to start or answer, run every command one-shot this long. @default 60000 */
  readonly retryAfterMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
  /** Told of each shell started and each shell that ended, for /metrics. */
  readonly observer?: LvmShellObserver;
}

export interface LvmShellObserver {
  started?(pid: number | undefined): void;
  /** `why`: "timeout", "aborted", "died", "protocol", "prompt", "start-failed", "closed". */
  ended?(why: ShellEnd): void;
}
export type ShellEnd = "timeout" | "aborted" | "died" | "protocol" | "prompt" | "start-failed" | "closed";

/** The shell process as LvmShell uses it: the real one spawns lvm in its own process group. */
export interface ShellProcess {
  readonly pid: number | undefined;
  write(text: string): void;
  end(): void;
  onData(stream: "report" | "stdout" | "stderr", listener: (chunk: string) => void): void;
  /** Called once, when the process has exited (or could not be started: code and signal null). */
  onExit(listener: (code: number | null, signal: string | null, error?: string) => void): void;
  killGroup(signal: NodeJS.Signals): void;
}
export type SpawnShell = (argv: readonly string[], env: NodeJS.ProcessEnv) => ShellProcess;

export type ShellOutcome =
  /** Success with no message: `stdout` is what the command prints run by itself. */
  | { readonly kind: "ok"; readonly stdout: string }
  /** lvm answered, but not cleanly (failed, or printed messages): re-run it by itself for its exact error. */
  | { readonly kind: "answered"; readonly exitCode: number; readonly why: string }
  /** A write's answer: its exit status, stdout and stderr as lvm prints them run by itself (writeOutput). */
  | { readonly kind: "wrote"; readonly exitCode: number; readonly stdout: string; readonly stderr: string }
  /**
   * A write asked a question (`prompt`, on stderr): the shell was killed there, before lvm changed
   * anything; run it by itself, where lvm reads "no" from a closed stdin.
   */
  | { readonly kind: "prompted"; readonly prompt: string }
  | { readonly kind: "timed-out" | "aborted"; readonly stderr: string; readonly signal?: string }
  /** The shell died or garbled its answer while the command ran; `why` says how. */
  | { readonly kind: "died"; readonly why: string; readonly signal?: string }
  /** Not run: another command is in the shell, or the shell is down (could not start or answer). */
  | { readonly kind: "unavailable"; readonly why: "busy" | "down" };

export interface ShellRunOptions {
  readonly timeoutMs: number;
  readonly signal?: AbortSignal;
  /** Called synchronously right before the command is written to the shell (the runner logs its start). */
  readonly onStart?: (pid: number | undefined) => void;
  /** A writing command: answered with its output rebuilt from the log ("wrote"), or "prompted". @default false */
  readonly write?: boolean;
}

interface Pending {
  readonly proc: ShellProcess;
  readonly write: boolean;
  text: string;
  /** What the command wrote to stdout and stderr itself (not in its answer), in order. */
  readonly extra: string[];
  stdout: string;
  stderr: string;
  /** A write's prompt was seen on stderr. */
  readonly prompted: (prompt: string) => void;
  readonly settle: (outcome: ShellOutcome | "protocol") => void;
  readonly exited: (code: number | null, signal: string | null, error?: string) => void;
}

export class LvmShell {
  private proc: ShellProcess | undefined;
  private starting: Promise<ShellProcess | undefined> | undefined;
  private pending: Pending | undefined;
  private busy = false;
  /** The process being checked with its first command: its end is a failed start. */
  private probing: ShellProcess | undefined;
  private downUntil = 0;
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly options: LvmShellOptions) {
    this.now = options.now ?? Date.now;
  }

  /** False while the shell is down (it did not start or answer recently), or after close(). */
  get available(): boolean {
    return !this.closed && this.now() >= this.downUntil;
  }

  /** Runs one command line (protocol: shellLine) in the shell. Never throws. */
  async run(line: string, options: ShellRunOptions): Promise<ShellOutcome> {
    if (this.busy) return { kind: "unavailable", why: "busy" };
    if (!this.available) return { kind: "unavailable", why: "down" };
    this.busy = true;
    try {
      const proc = this.proc ?? (await (this.starting ??= this.start()));
      if (!proc || this.closed) return { kind: "unavailable", why: "down" };
      if (options.signal?.aborted) return { kind: "aborted", stderr: "" };
      options.onStart?.(proc.pid);
      return await this.exchange(proc, line, options.timeoutMs, options.signal, options.write ?? false);
    } finally {
      this.busy = false;
    }
  }

  /** Ends the shell (stdin closed, then its group killed if it lingers); later runs answer "down". */
  async close(): Promise<void> {
    this.closed = true;
    const proc = this.proc ?? (this.starting ? await this.starting : undefined);
    if (!proc) return;
    this.forget(proc, "closed");
    const exited = new Promise<void>((resolve) => proc.onExit(() => resolve()));
    proc.end();
    const timer = setTimeout(() => proc.killGroup("SIGKILL"), 2000);
    await exited;
    clearTimeout(timer);
  }

  private async start(): Promise<ShellProcess | undefined> {
    let proc: ShellProcess;
    try {
      proc = this.options.spawn(this.options.argv, { ...this.options.env, LVM_REPORT_FD: "3" });
    } catch {
      this.starting = undefined;
      this.downUntil = this.now() + (this.options.retryAfterMs ?? 60_000);
      this.options.observer?.ended?.("start-failed");
      return undefined;
    }
    this.proc = proc;
    this.wire(proc);
    this.options.observer?.started?.(proc.pid);
    // The first answer proves the configuration took (an lvm without the command log would never
    // delimit a command): `formats` reads no device and prints one line.
    this.probing = proc;
    const first = await this.exchange(
      proc,
      "formats\n",
      this.options.startTimeoutMs ?? 10_000,
      undefined,
      false,
    );
    this.probing = undefined;
    this.starting = undefined;
    if ((first.kind === "answered" || first.kind === "ok") && this.proc === proc) return proc;
    this.forget(proc, "start-failed");
    proc.killGroup("SIGKILL");
    this.downUntil = this.now() + (this.options.retryAfterMs ?? 60_000);
    return undefined;
  }

  /** Writes one line and waits for its answer, the timeout, the abort, or the shell's end. */
  private exchange(
    proc: ShellProcess,
    line: string,
    timeoutMs: number,
    signal: AbortSignal | undefined,
    write: boolean,
  ): Promise<ShellOutcome> {
    return new Promise<ShellOutcome>((resolve) => {
      let stopping: "timed-out" | "aborted" | "prompted" | undefined;
      let killTimer: NodeJS.Timeout | undefined;
      let settled = false;
      const finish = (outcome: ShellOutcome) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (killTimer) clearTimeout(killTimer);
        signal?.removeEventListener("abort", onAbort);
        if (this.pending === pending) this.pending = undefined;
        resolve(outcome);
      };
      const stop = (why: "timed-out" | "aborted") => {
        stopping ??= why;
        // This shell is done: the next command starts another while this one dies.
        this.forget(proc, why === "timed-out" ? "timeout" : "aborted");
        proc.killGroup("SIGTERM");
        killTimer ??= setTimeout(() => proc.killGroup("SIGKILL"), this.options.killGraceMs ?? 5000);
      };
      const timer = setTimeout(() => stop("timed-out"), timeoutMs);
      const onAbort = () => stop("aborted");
      signal?.addEventListener("abort", onAbort, { once: true });
      const pending: Pending = {
        proc,
        write,
        text: "",
        extra: [],
        stdout: "",
        stderr: "",
        prompted: (prompt) => {
          if (stopping) return;
          // lvm waits for an answer on our stdin and has changed nothing yet: kill it there.
          stopping = "prompted";
          this.forget(proc, "prompt");
          proc.killGroup("SIGKILL");
          finish({ kind: "prompted", prompt });
        },
        settle: (result) => {
          if (stopping) return; // its end is the process's exit
          if (result !== "protocol") return finish(result);
          this.forget(proc, "protocol");
          proc.killGroup("SIGKILL");
          finish({ kind: "died", why: "the lvm shell wrote output that is not an answer" });
        },
        exited: (code, sig, error) => {
          if (stopping === "prompted") return; // answered already
          if (stopping)
            return finish({
              kind: stopping,
              stderr: pending.extra.join(""),
              ...(sig ? { signal: sig } : {}),
            });
          const how = error ?? (sig ? `was killed by ${sig}` : `exited ${code}`);
          finish({ kind: "died", why: `the lvm shell ${how}`, ...(sig ? { signal: sig } : {}) });
        },
      };
      this.pending = pending;
      proc.write(line);
    });
  }

  /** Wires a new process's output and exit to the command pending in it. */
  private wire(proc: ShellProcess): void {
    const mine = () => (this.pending?.proc === proc ? this.pending : undefined);
    proc.onExit((code, signal, error) => {
      this.forget(proc, "died");
      mine()?.exited(code, signal, error);
    });
    proc.onData("report", (chunk) => {
      const p = mine();
      if (!p) return this.unexpected(proc);
      p.text += chunk;
      if (!p.text.endsWith("\n  }\n")) return;
      const answer = parseShellAnswer(p.text);
      if (!answer) return;
      p.text = "";
      // Output the command wrote to stdout or stderr before its answer is in the same poll; let it
      // arrive before judging the answer.
      setImmediate(() => p.settle(judge(answer, p)));
    });
    const other = (stream: "stdout" | "stderr") => (chunk: string) => {
      // The shell prints a newline on stdout at its end (after stdin closed); anything else on stdout
      // or stderr belongs to the command running, or is a sign the shell is not what we think.
      if (stream === "stdout" && chunk.trim() === "") return;
      const p = mine();
      if (!p) return this.unexpected(proc);
      p.extra.push(chunk);
      p[stream] += chunk;
      if (p.write && stream === "stderr" && isPrompt(p.stderr)) p.prompted(p.stderr);
    };
    proc.onData("stdout", other("stdout"));
    proc.onData("stderr", other("stderr"));
  }

  /** Output while no command runs in this shell: it is not in the state we think; it serves no more. */
  private unexpected(proc: ShellProcess): void {
    if (this.proc !== proc) return;
    this.forget(proc, "protocol");
    proc.killGroup("SIGKILL");
  }

  /** This process no longer serves commands (the next one starts another). */
  private forget(proc: ShellProcess, why: ShellEnd): void {
    if (this.proc !== proc) return;
    this.proc = undefined;
    this.options.observer?.ended?.(this.probing === proc && why !== "closed" ? "start-failed" : why);
    if (why !== "closed") proc.end();
  }
}

function judge(answer: ShellAnswer, p: Pending): ShellOutcome {
  const exitCode = exitStatusOf(answer.retCode);
  if (p.write) {
    // A command line lvm refused ran nothing: the runner runs it by itself for lvm's exact usage error.
    if (answer.retCode === EINVALID_CMD_LINE)
      return { kind: "answered", exitCode, why: "lvm refused the command line (nothing ran)" };
    const out = writeOutput(answer, p.stderr);
    return { kind: "wrote", exitCode, stdout: p.stdout + out.stdout, stderr: out.stderr };
  }
  const extra = p.extra;
  if (exitCode !== 0) return { kind: "answered", exitCode, why: `lvm returned ${answer.retCode}` };
  if (answer.messages.length || extra.length)
    return { kind: "answered", exitCode, why: "lvm printed messages (the shell moves them out of stderr)" };
  if (answer.report === undefined) return { kind: "answered", exitCode, why: "the shell printed no report" };
  return { kind: "ok", stdout: answer.report };
}

/** The real shell: `argv` in a process group of its own, stdin, stdout, stderr and fd 3 piped. */
export const spawnLvmShellProcess: SpawnShell = (argv, env) => {
  const child = spawn(argv[0]!, argv.slice(1), {
    env,
    stdio: ["pipe", "pipe", "pipe", "pipe"],
    shell: false,
    detached: true,
  });
  let spawnError: string | undefined;
  child.on("error", (e) => (spawnError ??= e.message));
  child.stdin!.on("error", () => undefined); // EPIPE when it died: its exit says so
  const report = child.stdio[3] as NodeJS.ReadableStream;
  for (const s of [child.stdout!, child.stderr!, report]) s.setEncoding("utf8");
  const streams = { report, stdout: child.stdout!, stderr: child.stderr! };
  let exit: [number | null, string | null] | undefined;
  const exitListeners: Array<(code: number | null, signal: string | null, error?: string) => void> = [];
  const onEnd = (code: number | null, signal: string | null) => {
    if (exit) return;
    exit = [code, signal];
    for (const l of exitListeners.splice(0)) l(code, signal, spawnError);
  };
  child.on("exit", onEnd);
  child.on("error", () => onEnd(null, null));
  return {
    pid: child.pid,
    write: (text) => {
      if (child.stdin!.writable) child.stdin!.write(text);
    },
    end: () => child.stdin!.end(),
    onData: (stream, listener) => streams[stream].on("data", listener),
    onExit: (listener) => (exit ? listener(exit[0], exit[1], spawnError) : exitListeners.push(listener)),
    killGroup: (signal) => {
      try {
        if (child.pid) process.kill(-child.pid, signal);
      } catch {
        /* the group is gone */
      }
    },
  };
};
