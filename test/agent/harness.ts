/**
 * What the agent's integration tests share: loop devices of their own (backing files under
 * /var/tmp/agent-tests/, volume groups named agt-*), lvm run by the test itself (restricted to its
 * own devices by a filter, independent of the agent), agent processes started from src/agent/main.ts,
 * and a small HTTP(S) client.
 *
 * Other engineers create loop devices and volume groups on the same machine: everything here touches
 * only the devices it created, and cleanup() removes exactly those.
 */
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";

export const REPO = path.resolve(__dirname, "..", "..");
export const ROOT = "/var/tmp/agent-tests";
const AGENT = path.join(REPO, "src", "agent", "main.ts");
/** The agent with its test hook (pause after a step), used when a test sets PAUSE_ENV. */
const PAUSING_AGENT = path.join(REPO, "test", "support", "agent", "pausing-agent.ts");
const PAUSE_ENV = "PULUMI_LVM_AGENT_TEST_PAUSE_AFTER_STEP";
const LVM_ENV = { ...process.env, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" };

/** Fails loudly (never skips) when this machine cannot run the host tier. */
export function requireHostTier(): void {
  const missing = ["losetup", "lvm", "wipefs", "lsblk", "setpriv"].filter((t) => {
    try {
      execFileSync("sh", ["-c", `command -v ${t}`], { stdio: "ignore" });
      return false;
    } catch {
      return true;
    }
  });
  if (process.getuid?.() !== 0) missing.push("(root)");
  if (missing.length)
    throw new Error(`the agent's host tier needs root and ${missing.join(", ")}: run test/setup.sh as root`);
}

/** A scratch directory and the loop devices of one test file. */
export class Scratch {
  readonly dir: string;
  readonly loops: string[] = [];

  /** `root`: where the backing files go (another tier's tests keep theirs apart). @default ROOT */
  constructor(name: string, root: string = ROOT) {
    fs.mkdirSync(root, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(root, `${name}-`));
  }

  /** Creates a loop device over a new sparse file of `mib` MiB and returns its path. */
  loop(mib = 128): string {
    const file = path.join(this.dir, `disk${this.loops.length}.img`);
    fs.writeFileSync(file, "");
    fs.truncateSync(file, mib * 1024 * 1024);
    const dev = execFileSync("losetup", ["--find", "--show", file], { encoding: "utf8" }).trim();
    this.loops.push(dev);
    return dev;
  }

  path(name: string): string {
    return path.join(this.dir, name);
  }

  /**
   * Where an agent started on this scratch keeps its journal, lvmd.yaml and command log; with
   * `node`, files of that node's own (`<node>-state`, ...), for several agents on one scratch.
   */
  agentFiles(node?: string): Pick<AgentOptions, "stateDir" | "lvmdConfig" | "commandLog"> {
    const file = (name: string) => this.path(node ? `${node}-${name}` : name);
    return { stateDir: file("state"), lvmdConfig: file("lvmd.yaml"), commandLog: file("commands.jsonl") };
  }

  /** Removes our volume groups, PV labels and loop devices, and the scratch directory. */
  cleanup(): void {
    if (this.loops.length) {
      for (const vg of vgNames(this.loops)) lvm(this.loops, ["vgremove", "--force", vg], true);
      for (const pv of pvs(this.loops))
        lvm(this.loops, ["pvremove", "--force", "--force", "--yes", pv.pv_name], true);
      for (const dev of this.loops) {
        try {
          execFileSync("losetup", ["--detach", dev], { stdio: "ignore" });
        } catch {
          /* already detached */
        }
      }
    }
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The lvm filter that makes lvm see exactly `devices`. */
export function filterConfig(devices: readonly string[]): string {
  const list = `[${[...devices.map((d) => `"a|^${d}$|"`), '"r|.*|"'].join(",")}]`;
  return `devices { use_devicesfile=0 filter=${list} global_filter=${list} }`;
}

/** Runs an lvm tool as the test (not through the agent), seeing only `devices`. */
export function lvm(devices: readonly string[], argv: readonly string[], ignoreFailure = false): string {
  const [tool, ...rest] = argv;
  try {
    return execFileSync(tool!, ["--config", filterConfig(devices), ...rest], {
      env: LVM_ENV,
      encoding: "utf8",
      stdio: ["ignore", "pipe", "pipe"],
    });
  } catch (e) {
    if (ignoreFailure) return "";
    throw e;
  }
}

export interface PvRow {
  pv_name: string;
  vg_name: string;
  pv_uuid: string;
  pv_tags: string;
}
export interface VgRow {
  vg_name: string;
  pv_count: string;
  vg_tags: string;
  vg_size: string;
}

/** `pvs` as the test sees it. */
export function pvs(devices: readonly string[]): PvRow[] {
  const out = lvm(devices, [
    "pvs",
    "--reportformat",
    "json",
    "--units",
    "b",
    "--nosuffix",
    "-o",
    "pv_name,vg_name,pv_uuid,pv_tags",
  ]);
  return JSON.parse(out).report[0].pv;
}

/** `vgs` as the test sees it. */
export function vgs(devices: readonly string[]): VgRow[] {
  const out = lvm(devices, [
    "vgs",
    "--reportformat",
    "json",
    "--units",
    "b",
    "--nosuffix",
    "-o",
    "vg_name,pv_count,vg_tags,vg_size",
  ]);
  return JSON.parse(out).report[0].vg;
}

function vgNames(devices: readonly string[]): string[] {
  try {
    return vgs(devices).map((v) => v.vg_name);
  } catch {
    return [];
  }
}

/** The members of a volume group, sorted. */
export function membersOf(devices: readonly string[], vg: string): string[] {
  return pvs(devices)
    .filter((p) => p.vg_name === vg)
    .map((p) => p.pv_name)
    .sort();
}

/* --------------------------------------------------------------------------- agents ---- */

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

/* ----------------------------------------------------------------------------- HTTP ---- */

export { request, type Res } from "../support/agent/http";

/** A Thick LVMNode spec: one volume group on the given devices (selected by path), one device class. */
export function thickSpec(vg: string, devices: readonly string[]) {
  return {
    volumeGroups: [
      {
        name: vg,
        minDeviceSize: "64Mi",
        deviceSelector: {
          deviceSelectorTerms: [
            { matchExpressions: [{ key: "path", operator: "In", values: [...devices] }] },
          ],
        },
      },
    ],
    deviceClasses: [{ name: `${vg}-thick`, strategy: "Thick", volumeGroup: vg, default: true }],
  };
}

/* ------------------------------------------------------------------------------ TLS ---- */

/** A throw-away CA and a serving certificate for 127.0.0.1/localhost signed by it (openssl). */
export function makeTls(dir: string): { ca: string; cert: string; key: string } {
  const run = (args: string[]) =>
    execFileSync("openssl", args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  run([
    "req",
    "-x509",
    ...ec,
    "-keyout",
    "ca.key",
    "-out",
    "ca.crt",
    "-days",
    "1",
    "-subj",
    "/CN=agent-test-ca",
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
  ]);
  fs.writeFileSync(
    path.join(dir, "serving.ext"),
    "basicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\nsubjectAltName=IP:127.0.0.1,DNS:localhost\n",
  );
  run(["req", ...ec, "-keyout", "serving.key", "-out", "serving.csr", "-subj", "/CN=127.0.0.1"]);
  run([
    "x509",
    "-req",
    "-in",
    "serving.csr",
    "-CA",
    "ca.crt",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "serving.crt",
    "-days",
    "1",
    "-extfile",
    "serving.ext",
  ]);
  return {
    ca: path.join(dir, "ca.crt"),
    cert: path.join(dir, "serving.crt"),
    key: path.join(dir, "serving.key"),
  };
}

/** A kubeconfig for `server` with a CA file and a bearer token. */
export function writeKubeconfig(file: string, server: string, caFile: string, token: string): void {
  const ca = fs.readFileSync(caFile).toString("base64");
  fs.writeFileSync(
    file,
    [
      "apiVersion: v1",
      "kind: Config",
      "current-context: c",
      "contexts: [{name: c, context: {cluster: k, user: u}}]",
      `clusters: [{name: k, cluster: {server: "${server}", certificate-authority-data: ${ca}}}]`,
      `users: [{name: u, user: {token: "${token}"}}]`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );
}
