/**
 * Reading an agent's --command-log as a test: every command it started and ended, and which of them
 * wrote to a device (by a list of the test's own, independent of the agent's runner).
 */
import * as fs from "node:fs";

/** One line of an agent's --command-log: a command about to start, or one that ended (with its exit code). */
export interface CommandLogLine {
  event: "start" | "end";
  tool: string;
  requested: string[];
  startedAt: string;
  exitCode?: number | null;
}

/** Every line of an agent's --command-log, starts and ends. */
export function commandLogLines(file: string): CommandLogLine[] {
  if (!fs.existsSync(file)) return [];
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));
}

/** The commands an agent's --command-log recorded as ended (one entry per command run). */
export function commandLog(
  file: string,
): Array<{ tool: string; requested: string[]; exitCode: number | null }> {
  return commandLogLines(file)
    .filter((l) => l.event !== "start")
    .map((l) => ({ ...l, exitCode: l.exitCode ?? null }));
}

/** Tools that write to devices (everything but the read-only probes and reports). */
export const WRITE_TOOLS = new Set([
  "pvcreate",
  "pvremove",
  "pvmove",
  "pvchange",
  "vgcreate",
  "vgextend",
  "vgreduce",
  "vgremove",
  "lvcreate",
  "lvextend",
  "lvremove",
  "lvchange",
]);

export function isWrite(c: { tool: string; requested: string[] }): boolean {
  return WRITE_TOOLS.has(c.tool) || (c.tool === "wipefs" && !c.requested.includes("--no-act"));
}
