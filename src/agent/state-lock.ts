import * as fs from "node:fs";
import * as path from "node:path";

export const LOCK_FILE = "agent.pid";

/**
 * Makes one agent process the only user of a state directory (its journal): creates
 * `<stateDir>/agent.pid` exclusively. A lock left by a process that no longer runs (kill -9, a
 * crash) is taken over; a live one is an error naming its pid. Returns the release function.
 */
export function lockStateDir(stateDir: string, pid = process.pid): () => void {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const file = path.join(stateDir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      fs.writeFileSync(file, `${pid}\n`, { flag: "wx", mode: 0o600 });
      return () => {
        if (readPid(file) === pid) fs.rmSync(file, { force: true });
      };
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EEXIST") throw e;
      const holder = readPid(file);
      if (holder !== undefined && holder !== pid && alive(holder))
        throw new Error(`state directory ${stateDir} is in use by another agent (pid ${holder}, ${file})`);
      fs.rmSync(file, { force: true });
    }
  }
  throw new Error(`cannot lock state directory ${stateDir} (${file} keeps reappearing)`);
}

function readPid(file: string): number | undefined {
  try {
    const pid = Number(fs.readFileSync(file, "utf8").trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
