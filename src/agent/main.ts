import * as fs from "node:fs";
import type { AddressInfo } from "node:net";
import { AgentService, type Planner } from "./agent-service";
import { writeAllSync } from "./atomic-file";
import { createAuthorizer } from "./auth/authorizer";
import type { KubeAuthClient } from "./auth/kube-auth";
import { createKubeAuthClient } from "./auth/kube-client";
import { createTokenFileClient } from "./auth/token-file";
import { AGENT_USAGE, AgentConfigError, parseAgentConfig, type AgentConfig } from "./config";
import { createDiscovery } from "./discovery";
import { DiscoveryCache } from "../inventory/probe-cache";
import { Journal } from "./journal";
import { commandEnv, createLvmRunner, type CommandLogEntry, type CommandStartEntry } from "./lvm-runner";
import { LvmShell, spawnLvmShellProcess } from "./lvm-shell";
import { lvmShellSystemDir, syncIoSystemDir } from "./lvm-config-copies";
import { AgentMetrics } from "./metrics";
import { buildOpenApiDocument, openApiRoute } from "./openapi";
import { healthRoutes } from "./routes/health";
import { metricsRoute } from "./routes/metrics";
import { v1Routes } from "./routes/v1";
import { createAgentServer, TLS_OPTIONS } from "./server";
import { lockStateDir } from "./state-lock";
import { createLog } from "../log/logger";
import { processRegistry } from "../metrics/prometheus";
import { inClusterConnection } from "../kube/connection";
import { connectionFromKubeconfigFile } from "../kube/kubeconfig";
import { followServingCertificate } from "../kube/serving-certificate";
import { planNode, planTeardown } from "../planner";
import type { CliIO } from "../process/subcommand";
import { catchStopSignals, whenAborted } from "../process/stop-signal";

export interface RunAgentArgs {
  /** The arguments after `pulumi-lvm agent`. */
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Receives one JSON log line at a time (pino, tokens redacted: src/log). @default process.stderr */
  readonly log?: (line: string) => void;
  /** @default the real planner (src/planner) */
  readonly planner?: Planner;
  /** @default the Kubernetes client the configuration names */
  readonly kubeClient?: KubeAuthClient;
  /** Called after each step of an operation (0-based), with the log (tests pause here to kill the agent mid-operation). */
  readonly afterStep?: (index: number, log: (entry: Record<string, unknown>) => void) => Promise<void>;
}

export interface RunningAgent {
  readonly config: AgentConfig;
  /** e.g. "https://127.0.0.1:43117" (the real port when --listen asked for port 0). */
  readonly url: string;
  /** Graceful stop: no new requests, a running operation stops after its current step (or the grace), lock released. */
  stop(): Promise<void>;
}

/**
 * `pulumi-lvm agent`: validates the configuration, locks the state directory, opens the journal,
 * and serves the agent's API until stop() (SIGTERM when run as a program).
 */
export async function runAgent(args: RunAgentArgs): Promise<RunningAgent> {
  const log = createLog(args.log ? { writeLine: args.log } : {});
  const config = parseAgentConfig(args.argv, args.env);

  const releaseLock = await lockStateDir(config.stateDir);
  try {
    const journal = new Journal({ stateDir: config.stateDir });
    const metrics = new AgentMetrics(processRegistry());
    const commandLog = config.commandLog ? fs.openSync(config.commandLog, "a", 0o600) : undefined;
    let commandLogClosed = false;
    const writeCommandLog = (line: Record<string, unknown>) =>
      writeAllSync(commandLog!, Buffer.from(`${JSON.stringify(line)}\n`), config.commandLog!);
    const lvmSystemDir = config.lvmSyncIo ? await syncIoSystemDir(config) : config.lvmSystemDir;
    const shellDir = config.lvmShell ? await lvmShellSystemDir(config, log) : undefined;
    const shell: LvmShell | undefined = shellDir
      ? new LvmShell({
          spawn: spawnLvmShellProcess,
          argv: [...config.commandPrefix, "lvm"],
          env: commandEnv({ lvmSystemDir: shellDir }),
          observer: metrics.lvmShellObserver((): boolean => shell?.available ?? false),
        })
      : undefined;
    // A confined agent's names read (step-safety.ts) gets a shell of its own: it must not share the
    // agent's (lvm-runner.ts, namesShell). Not counted in the shell metrics (they describe the
    // agent's shell); its commands are in the route metrics as every command is.
    const namesShell: LvmShell | undefined =
      shellDir && config.devices
        ? new LvmShell({
            spawn: spawnLvmShellProcess,
            argv: [...config.commandPrefix, "lvm"],
            env: commandEnv({ lvmSystemDir: shellDir }),
          })
        : undefined;
    const run = createLvmRunner({
      commandPrefix: config.commandPrefix,
      ...(config.devices ? { devices: config.devices } : {}),
      ...(config.lvmConfig ? { lvmConfig: config.lvmConfig } : {}),
      ...(lvmSystemDir ? { lvmSystemDir } : {}),
      timeoutMs: config.commandTimeoutMs,
      ...(shell ? { shell, shellWrites: config.lvmShellWrites ?? false } : {}),
      ...(namesShell ? { namesShell } : {}),
      routed: (_tool, route) => metrics.recordLvmRoute(route),
      // Each command gets a "start" line before it runs and an "end" line after: after kill -9 the
      // log still shows the command that was running.
      logStart: (entry: CommandStartEntry) => {
        if (commandLog !== undefined && !commandLogClosed) writeCommandLog({ event: "start", ...entry });
      },
      log: (entry: CommandLogEntry) => {
        metrics.recordCommand(entry);
        if (commandLog !== undefined && !commandLogClosed) writeCommandLog({ event: "end", ...entry });
      },
    });
    const discover = createDiscovery({
      node: config.node,
      run,
      ...(config.devices ? { devices: config.devices } : {}),
      mountinfo: config.mountinfo,
      // Loop backing files are host paths: under a prefix, visible here only under --host-root.
      hostRoot: config.commandPrefix.length ? config.hostRoot : "/",
      ...(config.probeCache
        ? {
            cache: new DiscoveryCache({
              observe: (cache, result) => metrics.discoveryCache.inc({ cache, result }),
            }),
          }
        : {}),
    });
    const stopping = new AbortController();
    const killing = new AbortController();
    const service = new AgentService({
      node: config.node,
      run,
      discover,
      touched: discover.touched,
      planner: args.planner ?? { planNode, planTeardown },
      journal,
      metrics,
      lvmdConfigPath: config.lvmdConfig,
      confined: config.devices !== undefined,
      stopSignal: stopping.signal,
      killSignal: killing.signal,
      ...(args.afterStep ? { afterStep: (index: number) => args.afterStep!(index, log) } : {}),
    });

    const kube = args.kubeClient ?? kubeClientFor(config, args.env);
    const authorize = createAuthorizer({
      client: kube,
      node: config.node,
      namespace: config.namespace,
      audiences: config.audiences,
      cacheTtlMs: config.authCacheTtlMs,
    });
    const interrupted = journal.interrupted();
    if (interrupted)
      log({
        msg: "the last operation was interrupted; the same request resumes it",
        operation: interrupted.start.op,
        kind: interrupted.start.kind,
        approvedHash: interrupted.start.approvedHash,
      });
    const notReady = () => (stopping.signal.aborted ? "stopping" : undefined);
    // Awaited files not there yet: HTTPS with no certificate (every handshake refused, so no probe
    // passes) until followServingCertificate finds them.
    const awaiting =
      config.tls?.await === true &&
      !(fs.existsSync(config.tls.certFile) && fs.existsSync(config.tls.keyFile));
    if (awaiting)
      log({
        msg: "waiting for the serving certificate",
        certFile: config.tls!.certFile,
        keyFile: config.tls!.keyFile,
      });
    const server = createAgentServer({
      routes: [
        ...healthRoutes({ notReady }),
        metricsRoute(service),
        openApiRoute(buildOpenApiDocument()),
        ...v1Routes(service),
      ],
      authorize,
      serves: { node: config.node, namespace: config.namespace },
      metrics,
      bodyLimitBytes: config.bodyLimitBytes,
      ...(config.tls
        ? {
            tls: awaiting
              ? {}
              : {
                  cert: readFlagFile("tls-cert", config.tls.certFile, fs.readFileSync),
                  key: readFlagFile("tls-key", config.tls.keyFile, fs.readFileSync),
                },
          }
        : {}),
      log,
    });
    // A rotated certificate (its Secret updated, the files replaced) is served without a restart;
    // an awaited one from when its files appear.
    if (config.tls)
      followServingCertificate(server as import("node:https").Server, {
        certFile: config.tls.certFile,
        keyFile: config.tls.keyFile,
        options: TLS_OPTIONS,
        log,
        ...(awaiting ? { startedEmpty: true } : {}),
      });
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(config.listen.port, config.listen.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
    const url = `${config.tls ? "https" : "http"}://${host}:${address.port}`;
    log({
      msg: "listening",
      url,
      node: config.node,
      auth: config.auth.mode,
      devices: config.devices ?? "all",
      stateDir: config.stateDir,
    });

    let stopped: Promise<void> | undefined;
    const stop = () =>
      (stopped ??= (async () => {
        log({ msg: "stopping" });
        stopping.abort();
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        const grace = new Promise<void>((resolve) => setTimeout(resolve, config.shutdownGraceMs).unref());
        await Promise.race([service.idle(), grace]);
        if (service.busy) {
          // The grace ran out in the middle of a step: nothing more is journaled (the operation stays
          // interrupted and resumable), its command is killed with its process group, and the lock
          // is released only once the operation has let go.
          journal.close();
          killing.abort();
          log({ msg: "shutdown grace over: the running command is killed; the operation stays resumable" });
          const bound = new Promise<void>((resolve) => setTimeout(resolve, 10_000).unref());
          await Promise.race([service.idle(), bound]);
        }
        server.closeAllConnections();
        await closed;
        journal.close();
        await shell?.close();
        await namesShell?.close();
        commandLogClosed = true;
        if (commandLog !== undefined) fs.closeSync(commandLog);
        releaseLock();
        log({ msg: "stopped" });
      })());
    return { config, url, stop };
  } catch (e) {
    releaseLock();
    throw e;
  }
}

function kubeClientFor(config: AgentConfig, env: NodeJS.ProcessEnv): KubeAuthClient {
  switch (config.auth.mode) {
    case "token-file":
      return readFlagFile("token-file", config.auth.file, createTokenFileClient);
    case "kubeconfig":
      return createKubeAuthClient(
        readFlagFile("kubeconfig", config.auth.file, (f) => connectionFromKubeconfigFile(f)),
      );
    case "in-cluster":
      return createKubeAuthClient(inClusterConnection(env));
  }
}

/**
 * Reads the file a flag names; a file that cannot be read is a configuration error naming the flag
 * and the file (exit 2), not a bare "ENOENT: no such file or directory, open ...".
 */
function readFlagFile<T>(flag: string, file: string, read: (file: string) => T): T {
  try {
    return read(file);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (typeof code !== "string" || !/^E[A-Z]+$/.test(code)) throw e;
    const why = code === "ENOENT" ? "no such file" : code === "EACCES" ? "permission denied" : code;
    throw new AgentConfigError([{ path: `--${flag}`, message: `cannot read ${file}: ${why}` }]);
  }
}

/**
 * The `pulumi-lvm agent` subcommand: serves until SIGTERM/SIGINT, then stops between steps (an
 * interrupted apply stays resumable) and resolves 0; 2 on bad configuration, 1 when it cannot start.
 */
export async function run(io: CliIO, extra: Pick<RunAgentArgs, "afterStep"> = {}): Promise<number> {
  if (io.argv.includes("--help") || io.argv.includes("-h")) {
    io.stdout(`${AGENT_USAGE}\n`);
    return 0;
  }
  // Caught before starting: a SIGTERM while the agent starts stops it as soon as it has (stop-signal.ts).
  const own = io.stopSignal ? undefined : catchStopSignals();
  const stopSignal = io.stopSignal ?? own!.signal;
  let agent: RunningAgent;
  try {
    agent = await runAgent({ argv: io.argv, env: process.env, ...extra });
  } catch (e) {
    own?.dispose();
    io.stderr(`pulumi-lvm agent: ${e instanceof Error ? e.message : String(e)}\n`);
    if (e instanceof AgentConfigError) io.stderr(`${AGENT_USAGE}\n`);
    return e instanceof AgentConfigError ? 2 : 1;
  }
  await whenAborted(stopSignal);
  own?.dispose();
  await agent.stop();
  return 0;
}

if (require.main === module)
  void run({
    argv: process.argv.slice(2),
    readFile: (file) => fs.promises.readFile(file, "utf8"),
    stdout: (text) => process.stdout.write(text),
    stderr: (text) => process.stderr.write(text),
  }).then((code) => process.exit(code));
