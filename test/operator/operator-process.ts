/**
 * `pulumi-lvm operator` as its own process (tsx, from source) against a test control plane, as the
 * "operator" identity, calling fake agents (plain HTTP, their static token): for tests where
 * processes are killed. Its JSON log lines are parsed as they come.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { repoRoot, type ControlPlane } from "../env/cluster";
import { AGENT_NAMESPACE, eventually } from "./env";

export interface OperatorProcess {
  readonly identity: string;
  readonly child: ChildProcess;
  /** Parsed log lines (JSON), each with the wall-clock ms it was read at (`seenAt`). */
  readonly logs: Array<Record<string, unknown> & { seenAt: number }>;
  /** Everything it wrote to stderr. */
  stderr(): string;
  /** The probe server's URL, once it listens. */
  url(): Promise<string>;
  readonly exited: Promise<number | null>;
  /** The first log line with this msg, when it came (wall-clock ms), waiting up to `ms`. */
  when(msg: string, ms?: number): Promise<number>;
  metrics(): Promise<string>;
  /** Resident set size now and at its peak (VmRSS, VmHWM from /proc), in bytes. */
  rss(): { now: number; peak: number };
  cleanup(): void;
}

export function startOperatorProcess(
  cp: ControlPlane,
  o: { readonly identity: string; readonly agentToken: string; readonly args?: readonly string[] },
): OperatorProcess {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), `operator-${o.identity}-`));
  fs.writeFileSync(path.join(dir, "token"), cp.tokens.operator);
  fs.writeFileSync(path.join(dir, "ca.crt"), cp.caPem);
  fs.writeFileSync(path.join(dir, "agent-token"), o.agentToken);
  // node with tsx's loader, not the tsx CLI (which runs node as its child): the pid is the operator's.
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      path.join(repoRoot, "src", "cli", "main.ts"),
      "operator",
      "--server",
      cp.url,
      "--token-file",
      path.join(dir, "token"),
      "--ca-file",
      path.join(dir, "ca.crt"),
      "--listen",
      "127.0.0.1:0",
      "--agent-namespace",
      AGENT_NAMESPACE,
      "--agent-token-file",
      path.join(dir, "agent-token"),
      "--agent-allow-plain-http",
      "--leader-elect",
      "--leader-election-namespace",
      AGENT_NAMESPACE,
      "--leader-election-identity",
      o.identity,
      ...(o.args ?? []),
    ],
    { stdio: ["ignore", "pipe", "pipe"], cwd: repoRoot },
  );
  let text = "";
  let partial = "";
  const logs: OperatorProcess["logs"] = [];
  child.stderr!.on("data", (chunk: Buffer) => {
    text += chunk.toString();
    partial += chunk.toString();
    const lines = partial.split("\n");
    partial = lines.pop()!;
    for (const line of lines)
      try {
        logs.push({ ...(JSON.parse(line) as Record<string, unknown>), seenAt: Date.now() });
      } catch {
        // not a log line (a stack trace, tsx's own output): kept in stderr()
      }
  });
  child.stdout!.resume();
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  const url = () =>
    eventually(
      `${o.identity} listening`,
      async () => logs.find((l) => l.msg === "listening")?.url as string,
      60_000,
    );
  return {
    identity: o.identity,
    child,
    logs,
    stderr: () => text,
    url,
    exited,
    when: async (msg, ms = 60_000) => {
      const line = await eventually(
        `${o.identity}: log "${msg}"`,
        async () => logs.find((l) => l.msg === msg),
        ms,
      );
      return Date.parse(String(line.time));
    },
    metrics: async () => (await fetch(`${await url()}/metrics`)).text(),
    rss: () => {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, "utf8");
      const kb = (field: string) =>
        Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? NaN) * 1024;
      return { now: kb("VmRSS"), peak: kb("VmHWM") };
    },
    cleanup: () => {
      child.kill("SIGKILL");
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
