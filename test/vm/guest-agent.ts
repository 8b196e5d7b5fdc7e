/**
 * The node agent running inside a qemu guest, as on a real node: `node --import tsx src/agent/main.ts`
 * started with guest.spawn(), listening on 0.0.0.0 in the guest (plain HTTP, --allow-plain-http: the
 * only client is the test, through qemu's port forward on the host's 127.0.0.1), with a static token
 * file, a state directory and an lvmd.yaml path on the guest's writable system disk, and --devices
 * limited to the test's disks. The test reaches it at `http://127.0.0.1:<guest.hostPort(port)>`.
 *
 *   const agent = await startGuestAgent(guest, { node: "pl-guest", port: 8443, devices, ... });
 *   const plan = await agentClient().plan(agent.endpoint, spec);  // exactly as the provider calls it
 *   await agent.stop();                                          // SIGTERM; resolves with its exit code
 */
import { randomBytes } from "node:crypto";
import * as path from "node:path";
import type { AgentEndpoint } from "../../src/agent-client/agent-client";
import { request } from "../agent/harness";
import { REPO_ROOT, type Guest } from "./guest";

export interface GuestAgentOptions {
  /** --node; also the node the token file's line is for. @example "pl-guest" */
  readonly node: string;
  /** The guest port it listens on (0.0.0.0:<port>); must be one of the guest's forwardPorts. */
  readonly port: number;
  /** --devices: this boot's kernel names of the test disks (never the system disk). */
  readonly devices: readonly string[];
  /** --state-dir, in the guest. @example "/var/lib/pulumi-lvm/agent" */
  readonly stateDir: string;
  /** --lvmd-config, in the guest. @example "/etc/topolvm/lvmd.yaml" */
  readonly lvmdConfig: string;
  /** --command-log, in the guest. */
  readonly commandLog: string;
  /** --token-file, in the guest; written by startGuestAgent with one fresh token for `node`. */
  readonly tokenFile: string;
  /** Give up waiting for /readyz after this long. @default 180000 (tsx compiling under TCG is slow) */
  readonly readyTimeoutMs?: number;
}

export interface GuestAgent {
  /** http://127.0.0.1:<host port> */
  readonly url: string;
  readonly token: string;
  /** For src/agent-client/agent-client.ts: the provider's own client. */
  readonly endpoint: AgentEndpoint;
  /** The agent's pid in the guest (the command service's background process). */
  readonly pid: number;
  /** Its stdout+stderr (JSON log lines), in the guest. */
  readonly logFile: string;
  /** Milliseconds from spawn to /readyz answering 200. */
  readonly startMs: number;
  /** The last lines of its log, for error messages. */
  logTail(lines?: number): Promise<string>;
  /** SIGTERM, then waits for it to exit; resolves with its exit code (throws if it does not exit). */
  stop(timeoutMs?: number): Promise<number | null>;
}

const AGENT = path.join(REPO_ROOT, "src", "agent", "main.ts");

/** Writes a file in the guest (argv only: dd reads the content from stdin), then sets its mode. */
export async function writeGuestFile(
  guest: Guest,
  file: string,
  content: string,
  mode = "600",
): Promise<void> {
  await guest.run(["mkdir", "-p", path.posix.dirname(file)]);
  await guest.run(["dd", `of=${file}`, "status=none"], { stdin: content });
  await guest.run(["chmod", mode, file]);
}

export async function startGuestAgent(guest: Guest, o: GuestAgentOptions): Promise<GuestAgent> {
  const hostPort = guest.hostPort(o.port);
  const token = randomBytes(24).toString("hex");
  await writeGuestFile(guest, o.tokenFile, `# conformance test\n${token},conformance,${o.node}\n`);
  await guest.run(["mkdir", "-p", "-m", "700", o.stateDir]);
  await guest.run(["mkdir", "-p", path.posix.dirname(o.lvmdConfig), path.posix.dirname(o.commandLog)]);
  const argv = [
    "node",
    "--import",
    "tsx",
    AGENT,
    ...["--node", o.node, "--listen", `0.0.0.0:${o.port}`, "--allow-plain-http"],
    ...["--token-file", o.tokenFile, "--devices", o.devices.join(",")],
    ...["--state-dir", o.stateDir, "--lvmd-config", o.lvmdConfig, "--command-log", o.commandLog],
  ];
  const t0 = Date.now();
  const { pid, logFile } = await guest.spawn(argv, { cwd: REPO_ROOT });
  const logTail = async (lines = 40) => {
    const r = await guest.exec(["tail", "-n", String(lines), logFile]);
    return r.code === 0 ? r.stdout : `(cannot read ${logFile}: ${r.stderr.trim()})`;
  };
  const url = `http://127.0.0.1:${hostPort}`;
  const exited = async () =>
    (await guest.processes()).find((p) => p.pid === pid && (p.exitCode !== null || p.signal !== null));

  const deadline = t0 + (o.readyTimeoutMs ?? 180_000);
  for (;;) {
    try {
      // qemu accepts on the host side before anything listens in the guest; such a connection can
      // wait forever, so every attempt has its own deadline.
      const r = await request(url, "GET", "/readyz", { timeoutMs: 3000 });
      if (r.status === 200) break;
    } catch {
      /* not listening yet */
    }
    const gone = await exited();
    if (gone)
      throw new Error(
        `the agent in the guest exited (${gone.exitCode ?? gone.signal}) before it was ready:\n` +
          `${argv.join(" ")}\n----- ${logFile} -----\n${await logTail()}`,
      );
    if (Date.now() > deadline)
      throw new Error(
        `the agent in the guest did not answer GET /readyz within ${o.readyTimeoutMs ?? 180_000} ms:\n` +
          `${argv.join(" ")}\n----- ${logFile} -----\n${await logTail()}`,
      );
    await new Promise((r) => setTimeout(r, 500));
  }
  const startMs = Date.now() - t0;

  return {
    url,
    token,
    endpoint: { node: o.node, url, token },
    pid,
    logFile,
    startMs,
    logTail,
    async stop(timeoutMs = 60_000) {
      await guest.kill(pid, "SIGTERM");
      const until = Date.now() + timeoutMs;
      for (;;) {
        const gone = await exited();
        if (gone) return gone.exitCode;
        if (Date.now() > until)
          throw new Error(
            `the agent (pid ${pid}) did not exit within ${timeoutMs} ms of SIGTERM:\n${await logTail()}`,
          );
        await new Promise((r) => setTimeout(r, 250));
      }
    },
  };
}
