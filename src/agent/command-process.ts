import { spawn } from "node:child_process";

/** How one command's process ended, and what it printed. */
export interface Outcome {
  exitCode: number | null;
  signal?: string;
  stdout: string;
  stderr: string;
  timedOut?: boolean;
  aborted?: boolean;
  cause?: string;
}

/**
 * Runs argv as one process in a process group of its own, stdin closed; kills the group on timeout or
 * abort (SIGTERM, then SIGKILL after killGraceMs). Never rejects.
 */
export function execute(
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
