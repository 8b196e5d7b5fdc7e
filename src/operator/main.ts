import { readFile } from "node:fs/promises";
import type { AddressInfo } from "node:net";
import { agentClient } from "../agent-client/agent-client";
import { tokenFromFile } from "./agents/token-file";
import { systemClock, type Clock } from "../kube/clock";
import { parseOperatorConfig, type OperatorConfig } from "./config";
import { createProbeServer } from "./http-server";
import { createKubeClient, type KubeClient } from "../kube/client";
import { explicitConnection, inClusterConnection } from "../kube/connection";
import { connectionFromKubeconfigFile } from "../kube/kubeconfig";
import { OperatorMetrics } from "./metrics";
import { Operator } from "./operator";

export interface StartOperatorArgs {
  /** The arguments after `pulumi-lvm operator`. */
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Receives one JSON log line at a time. @default process.stderr */
  readonly log?: (line: string) => void;
  /** @default the client the configuration describes */
  readonly kube?: KubeClient;
  /** @default the system clock */
  readonly clock?: Clock;
}

export interface RunningOperator {
  readonly config: OperatorConfig;
  /** The probe server's base URL, e.g. "http://127.0.0.1:8081" (the real port when asked for 0). */
  readonly url: string;
  readonly operator: Operator;
  /** Graceful stop: not ready at once, the reconcile in progress finishes, watches close. */
  stop(): Promise<void>;
}

/** Validates the configuration, starts the probe server and the operator; throws OperatorConfigError on bad flags. */
export async function startOperator(args: StartOperatorArgs): Promise<RunningOperator> {
  const config = parseOperatorConfig(args.argv, args.env);
  const clock = args.clock ?? systemClock;
  const writeLine = args.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const log = (entry: Record<string, unknown>) =>
    writeLine(JSON.stringify({ time: new Date(clock.now()).toISOString(), ...entry }));
  const metrics = new OperatorMetrics();
  const kube =
    args.kube ??
    createKubeClient({
      connection: config.connection
        ? explicitConnection(config.connection)
        : config.kubeconfig
          ? connectionFromKubeconfigFile(config.kubeconfig.file, config.kubeconfig.context)
          : inClusterConnection(args.env),
      onRequest: (r) => metrics.recordRequest(r),
    });
  const operator = new Operator({
    kube,
    clock,
    metrics,
    log,
    ...(config.namespace ? { namespace: config.namespace } : {}),
    workers: config.workers,
    resyncMs: config.resyncMs,
    agents: {
      namespace: config.agents.namespace,
      client: agentClient(),
      token: tokenFromFile(config.agents.tokenFile),
      ...(config.agents.caFile ? { ca: readCa(config.agents.caFile) } : {}),
    },
  });
  const stopping = new AbortController();
  const server = createProbeServer({
    notReady: () =>
      stopping.signal.aborted ? "stopping" : operator.ready ? undefined : "caches not synced yet",
    metrics: () => metrics.render(operator.queue.depth, operator.lvmNodeGauges()),
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.listen.port, config.listen.host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  const url = `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
  log({ msg: "listening", url, namespace: config.namespace || "(all)", workers: config.workers });
  const running = operator.run(stopping.signal).catch((e: unknown) => {
    log({ msg: "operator stopped with an error", error: (e as Error).message });
  });
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      log({ msg: "stopping" });
      stopping.abort();
      await running;
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      });
      log({ msg: "stopped" });
    })());
  return { config, url, operator, stop };
}

/** The agents' CA, re-read on every call (cert-manager rotates it). */
function readCa(file: string): () => Promise<string> {
  return () => readFile(file, "utf8");
}
