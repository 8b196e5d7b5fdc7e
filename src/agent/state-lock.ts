import { spawn, type ChildProcessWithoutNullStreams } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export const LOCK_FILE = "agent.pid";

/** How long a lock held by a process that just died may take to be let go (its holder sees EOF). */
const RETRY_MS = 3000;

/**
 * What the lock runs in the agent's own container (not through --command-prefix): flock(1) and
 * sh, reading its pipe with the shell's own `read` until EOF. Nothing else: the image has no
 * coreutils (a holder that ran `cat` there failed at once and let the lock go).
 */
export const LOCK_EXECUTABLES = ["flock", "sh"] as const;
const HOLD = "echo locked; while read -r _; do :; done";

/**
 * Makes one agent process the only user of a state directory (its journal) with a kernel lock:
 * `flock(2)` on `<stateDir>/agent.pid`, held by a `flock(1)` child (util-linux, beside nsenter;
 * Node has no flock) for as long as this process lives. The holder reads this process's
 * pipe: when this process exits in any way (kill -9 included) the pipe closes and the lock is let go
 * by the kernel — no stale lock to take over, no pid to check (a pid may be reused by an unrelated
 * process), no window in which two processes both take over a stale one. The file holds the pid of
 * the holder for people; it is never removed (removing a lock file lets a second holder in).
 * Returns the release function.
 */
export async function lockStateDir(stateDir: string, pid = process.pid): Promise<() => void> {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, LOCK_FILE);
  fs.closeSync(fs.openSync(file, "a", 0o600));
  const deadline = Date.now() + RETRY_MS;
  for (;;) {
    const holder = spawn(
      "flock",
      ["--exclusive", "--nonblock", "--conflict-exit-code", "75", file, "sh", "-c", HOLD],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    const outcome = await held(holder);
    if (outcome === "locked") {
      fs.writeFileSync(file, `${pid}\n`);
      holder.stdout.destroy();
      holder.stderr.destroy();
      holder.unref();
      (holder.stdin as unknown as { unref?: () => void }).unref?.();
      let released = false;
      return () => {
        if (released) return;
        released = true;
        try {
          fs.writeFileSync(file, "");
        } catch {
          /* the directory is gone */
        }
        holder.stdin.end(); // the holder sees EOF, exits, and the kernel lets go of the lock
      };
    }
    if (outcome.code === 75) {
      if (Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100));
        continue;
      }
      const other = readPid(file);
      throw new Error(
        `state directory ${stateDir} is in use by another agent${other ? ` (pid ${other}, ${file})` : ` (${file} is locked)`}`,
      );
    }
    throw new Error(
      `cannot lock state directory ${stateDir}: flock ${file} ${outcome.error ?? `exited ${outcome.code}`}${outcome.stderr ? `: ${outcome.stderr.trim()}` : ""} (flock(1) from util-linux is needed)`,
    );
  }
}

function held(
  holder: ChildProcessWithoutNullStreams,
): Promise<"locked" | { code: number | null; stderr: string; error?: string }> {
  return new Promise((resolve) => {
    let out = "";
    let err = "";
    holder.stdout.on("data", (d: Buffer) => {
      out += d.toString();
      if (out.includes("locked")) resolve("locked");
    });
    holder.stderr.on("data", (d: Buffer) => (err += d.toString()));
    holder.on("error", (e) => resolve({ code: null, stderr: err, error: e.message }));
    holder.on("exit", (code) => resolve({ code, stderr: err }));
  });
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}
