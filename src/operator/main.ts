import type { AddressInfo } from "node:net";
import { agentClient } from "../agent-client/agent-client";
import type { AgentTls } from "./agents/driver";
import { agentCaFromFile } from "./agents/file-source";
import { tokenFromFile, type AgentTokenSource } from "./agents/token-file";
import { serviceAccountOfToken, tokenRequests } from "./agents/token-request";
import { systemClock, type Clock } from "../kube/clock";
import { OperatorConfigError, parseOperatorConfig, type OperatorConfig } from "./config";
import { createProbeServer } from "./http-server";
import { AdmissionCache } from "./admission/reads";
import { createWebhookServer } from "./admission/server";
import { CertificateIssuer } from "./certificates/issuer";
import { createKubeClient, type KubeClient, type KubePaths } from "../kube/client";
import { explicitConnection, inClusterConnection, type KubeConnection } from "../kube/connection";
import { connectionFromKubeconfigFile } from "../kube/kubeconfig";
import { createLog } from "../log/logger";
import { processRegistry } from "../metrics/prometheus";
import { OperatorMetrics } from "./metrics";
import { DEFAULT_LVMNODE_WORKERS, Operator } from "./operator";
import type { TermEnd } from "./leader/elector";
import {
  leaderElectorFor,
  operatorUserAgent,
  registerLeaderMetrics,
  replicaIdentity,
} from "./leader/replica";
import { leaderOnlyAgentChanges, leaderOnlyWrites } from "./leader/write-gate";

export interface StartOperatorArgs {
  /** The arguments after `pulumi-lvm operator`. */
  readonly argv: readonly string[];
  readonly env: NodeJS.ProcessEnv;
  /** Receives one JSON log line at a time (pino, tokens redacted: src/log). @default process.stderr */
  readonly log?: (line: string) => void;
  /** @default the client the configuration describes */
  readonly kube?: KubeClient & KubePaths;
  /** @default the system clock */
  readonly clock?: Clock;
}

export interface RunningOperator {
  readonly config: OperatorConfig;
  /** The admission webhook's base URL (https), when --webhook-listen asked for it. */
  readonly webhookUrl?: string;
  /** The probe server's base URL, e.g. "http://127.0.0.1:8081" (the real port when asked for 0). */
  readonly url: string;
  readonly operator: Operator;
  /** Graceful stop: not ready at once, the reconcile in progress finishes, watches close. */
  stop(): Promise<void>;
  /** Resolves "lost" when this replica lost the leader Lease and stopped reconciling (the process should exit). */
  readonly ended: Promise<TermEnd>;
}

/** Validates the configuration, starts the probe server and the operator; throws OperatorConfigError on bad flags. */
export async function startOperator(args: StartOperatorArgs): Promise<RunningOperator> {
  const config = parseOperatorConfig(args.argv, args.env);
  const clock = args.clock ?? systemClock;
  const log = createLog({ now: () => clock.now(), ...(args.log ? { writeLine: args.log } : {}) });
  const metrics = new OperatorMetrics(processRegistry());
  const connection = args.kube
    ? undefined
    : config.connection
      ? explicitConnection(config.connection)
      : config.kubeconfig
        ? connectionFromKubeconfigFile(config.kubeconfig.file, config.kubeconfig.context)
        : inClusterConnection(args.env);
  const identity = replicaIdentity(config);
  const apiClient =
    args.kube ??
    createKubeClient({
      connection: connection!,
      onRequest: (r) => metrics.recordRequest(r),
      userAgent: operatorUserAgent(identity),
    });
  // With leader election, every write waits for the Lease (leader/write-gate.ts); the Lease itself does not.
  const elector = leaderElectorFor(config, { kube: apiClient, clock, log, identity });
  const kube = elector ? leaderOnlyWrites(apiClient, () => elector.isLeader(), identity) : apiClient;
  registerLeaderMetrics(metrics.registry, elector, identity);
  const agentTls: AgentTls =
    config.agents.tls === "plain-http"
      ? "plain-http"
      : { ca: agentCaFromFile(config.agents.tls.caFile), serverName: config.agents.tls.serverName };
  const operator = new Operator({
    kube,
    clock,
    metrics,
    log,
    ...(config.namespace ? { namespace: config.namespace } : {}),
    workers: config.workers,
    ...(config.lvmNodeWorkers !== undefined ? { lvmNodeWorkers: config.lvmNodeWorkers } : {}),
    resyncMs: config.resyncMs,
    ...(config.deselectionGraceMs !== undefined ? { deselectionGraceMs: config.deselectionGraceMs } : {}),
    events: { instance: identity },
    classObjects: true,
    ...(config.providerReady ? { providerReady: true } : {}),
    agents: {
      namespace: config.agents.namespace,
      client: elector
        ? leaderOnlyAgentChanges(agentClient(), () => elector.isLeader(), identity)
        : agentClient(),
      token: agentTokens(config, kube, clock, connection),
      tls: agentTls,
    },
  });
  // The serving certificates, when the operator issues them: only the leader writes (below).
  const issuer = config.certificates
    ? new CertificateIssuer({
        kube: apiClient,
        clock,
        log,
        namespace: config.agents.namespace,
        ...config.certificates,
      })
    : undefined;
  const stopping = new AbortController();
  // The webhook's reads: informers of its own, on every replica, for as long as it serves (reads.ts).
  const admissionCache = config.webhook
    ? new AdmissionCache({
        kube: apiClient,
        clock,
        ...(config.namespace ? { namespace: config.namespace } : {}),
        onRestart: (resource, reason, error) => {
          metrics.watchRestarts.inc({ resource: `webhook:${resource}`, reason });
          log({
            msg: "webhook watch restarted",
            resource,
            reason,
            ...(error ? { error: error.message } : {}),
          });
        },
      })
    : undefined;
  const admissionCaching = admissionCache?.run(stopping.signal);
  let webhookCertificate = () => true; // set once the webhook server exists
  const server = createProbeServer({
    notReady: () =>
      stopping.signal.aborted
        ? "stopping"
        : admissionCache && !admissionCache.synced
          ? "the webhook's caches are not synced yet"
          : !webhookCertificate()
            ? "the webhook has no serving certificate yet"
            : issuer && !issuer.ready && !(elector && !elector.isLeader())
              ? "the serving certificates are not issued yet"
              : operator.ready || (elector && !elector.isLeader()) // a standby is ready to take over
                ? undefined
                : "caches not synced yet",
    metrics: () => metrics.render(operator.queue.depth, operator.lvmNodeGauges()),
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.listen.port, config.listen.host, () => resolve());
  });
  const url = `http://${hostOf(server.address() as AddressInfo)}`;
  // Every replica answers admission reviews (they only read), leader or standby.
  const webhook = config.webhook
    ? createWebhookServer({
        certDir: config.webhook.certDir,
        // Its Secret may come after the pod: issued by the operator or by cert-manager.
        awaitCertificate: true,
        reads: admissionCache!.reads,
        clock,
        log,
        onReview: (kind, allowed, seconds) => metrics.recordAdmission(kind, allowed, seconds),
      })
    : undefined;
  if (webhook) webhookCertificate = () => webhook.certificateLoaded;
  if (webhook && config.webhook)
    await new Promise<void>((resolve, reject) => {
      webhook.once("error", reject);
      webhook.listen(config.webhook!.port, config.webhook!.host, () => resolve());
    });
  const webhookUrl = webhook ? `https://${hostOf(webhook.address() as AddressInfo)}` : undefined;
  log({
    msg: "listening",
    url,
    ...(webhookUrl ? { webhookUrl } : {}),
    namespace: config.namespace || "(all)",
    workers: config.workers,
    lvmNodeWorkers: config.lvmNodeWorkers ?? DEFAULT_LVMNODE_WORKERS,
    identity,
  });
  // What the leader runs: the reconcilers, and the certificates when the operator issues them.
  const leading = async (signal: AbortSignal) => {
    await Promise.all([operator.run(signal), issuer?.run(signal)]);
  };
  const ended: Promise<TermEnd> = (
    elector
      ? elector.run(stopping.signal, (signal) => leading(signal))
      : leading(stopping.signal).then(() => "stopped" as const)
  ).catch((e: unknown) => {
    log({ msg: "operator stopped with an error", error: (e as Error).message });
    return "stopped" as const;
  });
  const running = ended.then(() => undefined);
  let stopped: Promise<void> | undefined;
  const stop = () =>
    (stopped ??= (async () => {
      log({ msg: "stopping" });
      stopping.abort();
      await running;
      await admissionCaching;
      await Promise.all(
        [server, ...(webhook ? [webhook] : [])].map(
          (s) =>
            new Promise<void>((resolve) => {
              s.close(() => resolve());
              s.closeAllConnections();
            }),
        ),
      );
      log({ msg: "stopped" });
    })());
  return { config, url, ...(webhookUrl ? { webhookUrl } : {}), operator, stop, ended };
}

/**
 * Each node's agent token: a static file when asked for, else a TokenRequest per node for the
 * operator's service account, named by --service-account or by its own API token (a service-account
 * JWT in a pod).
 */
function agentTokens(
  config: OperatorConfig,
  kube: KubeClient,
  clock: Clock,
  connection: KubeConnection | undefined,
): AgentTokenSource {
  const token = config.agents.token;
  if ("file" in token) return tokenFromFile(token.file);
  const serviceAccount =
    token.serviceAccount ?? (connection?.token && serviceAccountOfToken(connection.token()));
  if (!serviceAccount)
    throw new OperatorConfigError([
      {
        path: "--service-account",
        message:
          "the operator's API token does not name a service account; give --service-account NAMESPACE/NAME (the operator's own) or --agent-token-file",
      },
    ]);
  return tokenRequests({ kube, serviceAccount, clock });
}

function hostOf(address: AddressInfo): string {
  return `${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
}
