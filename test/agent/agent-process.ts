/**
 * Agent processes for the agent's integration tests: src/agent/main.ts under node and tsx, one
 * process each (so kill -9 hits the agent itself), dying with the test, optionally in a mount
 * namespace of their own; and the token files they read.
 */
import { ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const REPO = path.resolve(__dirname, "..", "..");
const AGENT = path.join(REPO, "src", "agent", "main.ts");
/** The agent with its test hook (pause after a step), used when a test sets PAUSE_ENV. */
const PAUSING_AGENT = path.join(REPO, "test", "support", "agent", "pausing-agent.ts");
const PAUSE_ENV = "PULUMI_LVM_AGENT_TEST_PAUSE_AFTER_STEP";
/**
 * Set (to 1) when running the agent's integration tests: every agent they start gets --lvm-sync-io,
 * so its reading reports run in its lvm shell (issue 18), e.g.
 * `PULUMI_LVM_TEST_LVM_SHELL=1 npx jest test/agent/crash.test.ts`; set to `writes`: --lvm-shell-writes
 * too, so the plan's writes run there as well.
 */
export const LVM_SHELL_ENV = "PULUMI_LVM_TEST_LVM_SHELL";

export interface AgentOptions {
  readonly node: string;
  readonly devices: readonly string[];
  readonly stateDir: string;
  readonly lvmdConfig: string;
  readonly commandLog: string;
  /** --token-file, or --kubeconfig, or extra args. */
  readonly auth: { tokenFile: string } | { kubeconfig: string };
  readonly extraArgs?: readonly string[];
  readonly env?: NodeJS.ProcessEnv;
  /**
   * A stand-in for a machine of its own, for tests that play several nodes on one host: the agent
   * runs in a mount namespace whose /dev holds only its own devices (and null, zero, urandom...),
   * so what lvm sees unconfined — e.g. the volume group names on "this machine" — is its node's
   * alone, as on separate machines.
   * @default false
   */
  readonly ownMachine?: boolean;
}

/**
 * Runs the rest of argv in a private mount namespace whose /dev has only the basic character
 * devices and the devices named in $OWN_DEVICES (see AgentOptions.ownMachine). `exec` keeps the pid.
 */
const OWN_MACHINE_SCRIPT = `set -eu
d=$(mktemp -d /tmp/pulumi-lvm-dev.XXXXXX)
for n in null zero full random urandom tty; do cp -a "/dev/$n" "$d/"; done
for dev in $OWN_DEVICES; do cp -a "$dev" "$d/"; done
mount --bind "$d" /dev
exec "$@"`;

export interface AgentProcess {
  readonly url: string;
  readonly pid: number;
  readonly child: ChildProcess;
  /** Every JSON log line so far. */
  readonly logs: Array<Record<string, unknown>>;
  /** Resolves with the exit code (or signal). */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Resolves when a log line matching `pred` appears. */
  waitForLog(
    pred: (entry: Record<string, unknown>) => boolean,
    ms?: number,
  ): Promise<Record<string, unknown>>;
  stop(): Promise<void>;
  kill9(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on("exit", () => {
  for (const c of running) if (c.pid) process.kill(c.pid, "SIGKILL");
});

/**
 * With LVM_SHELL_ENV set, --lvm-sync-io for an agent not given it; with a --command-prefix (the tests'
 * wrappers run commands in this mount namespace) also --host-root /, which --lvm-sync-io then needs.
 */
function lvmShellArgs(extraArgs: readonly string[]): string[] {
  const mode = process.env[LVM_SHELL_ENV];
  if ((mode !== "1" && mode !== "writes") || extraArgs.includes("--lvm-sync-io")) return [];
  const prefixed = extraArgs.includes("--command-prefix") && !extraArgs.includes("--host-root");
  return [
    "--lvm-sync-io",
    ...(prefixed ? ["--host-root", "/"] : []),
    ...(mode === "writes" ? ["--lvm-shell-writes"] : []),
  ];
}

/**
 * Starts `node --import tsx src/agent/main.ts` (one process, so kill -9 hits the agent itself; under
 * setpriv --pdeathsig, so it dies with the test) and waits for it to listen.
 */
export async function startAgent(o: AgentOptions): Promise<AgentProcess> {
  const args = [
    "--node",
    o.node,
    "--listen",
    "127.0.0.1:0",
    "--devices",
    o.devices.join(","),
    "--state-dir",
    o.stateDir,
    "--lvmd-config",
    o.lvmdConfig,
    "--command-log",
    o.commandLog,
    ...("tokenFile" in o.auth ? ["--token-file", o.auth.tokenFile] : ["--kubeconfig", o.auth.kubeconfig]),
    ...(o.extraArgs ?? []),
    ...lvmShellArgs(o.extraArgs ?? []),
  ];
  const agentArgv = [
    process.execPath,
    "--import",
    "tsx",
    o.env?.[PAUSE_ENV] ? PAUSING_AGENT : AGENT,
    ...args,
  ];
  const ownMachine = o.ownMachine
    ? ["unshare", "--mount", "--propagation", "private", "--", "sh", "-c", OWN_MACHINE_SCRIPT, "sh"]
    : [];
  const child = spawn("setpriv", ["--pdeathsig", "SIGKILL", "--", ...ownMachine, ...agentArgv], {
    cwd: REPO,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      ...(o.ownMachine ? { OWN_DEVICES: o.devices.join(" ") } : {}),
      ...o.env,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  const logs: Array<Record<string, unknown>> = [];
  const waiters: Array<() => void> = [];
  let stderr = "";
  let buf = "";
  child.stderr!.on("data", (chunk: Buffer) => {
    stderr += chunk.toString();
    buf += chunk.toString();
    for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
      const line = buf.slice(0, nl);
      buf = buf.slice(nl + 1);
      try {
        logs.push(JSON.parse(line));
      } catch {
        /* not a log line */
      }
      for (const w of waiters.splice(0)) w();
    }
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("exit", (code, signal) => {
      running.delete(child);
      for (const w of waiters.splice(0)) w();
      resolve({ code, signal });
    }),
  );
  const waitForLog = async (pred: (e: Record<string, unknown>) => boolean, ms = 20_000) => {
    const deadline = Date.now() + ms;
    for (;;) {
      const hit = logs.find(pred);
      if (hit) return hit;
      if (child.exitCode !== null || child.signalCode !== null)
        throw new Error(`agent exited (${child.exitCode ?? child.signalCode}):\n${stderr}`);
      if (Date.now() > deadline) throw new Error(`agent log line not seen in ${ms} ms:\n${stderr}`);
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 200);
      });
    }
  };
  const listening = await waitForLog((e) => e.msg === "listening");
  const kill = async (signal: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    await exited;
  };
  return {
    url: listening.url as string,
    pid: child.pid!,
    child,
    logs,
    exited,
    waitForLog,
    stop: () => kill("SIGTERM"),
    kill9: () => kill("SIGKILL"),
  };
}

/** A token file with one token per entry; returns the tokens. */
export function writeTokenFile(
  file: string,
  entries: Record<string, { user: string; node: string }>,
): Record<string, string> {
  const tokens: Record<string, string> = {};
  const lines = Object.entries(entries).map(([name, e]) => {
    tokens[name] = randomBytes(24).toString("hex");
    return `${tokens[name]},${e.user},${e.node}`;
  });
  fs.writeFileSync(file, `${lines.join("\n")}\n`, { mode: 0o600 });
  return tokens;
}
