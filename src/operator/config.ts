import { parseArgs } from "node:util";
import { z } from "zod";
import type { ValidationProblem } from "../api";
import { DEFAULT_WEBHOOK_CERT_DIR } from "../agent-api/admission";
import { AGENT_SERVER_NAME, DEFAULT_AGENT_CA_FILE } from "../agent-api/auth";
import {
  CERTIFICATE_FLAGS,
  CERTIFICATE_USAGE,
  certificateFlagProblems,
  certificateFlagsSchema,
  certificatesConfig,
  type CertificatesConfig,
} from "./certificates/config";

/** The operator's configuration, from flags, or PULUMI_LVM_OPERATOR_<FLAG> variables (flags win). */
export interface OperatorConfig {
  /** Explicit API server (local runs, tests); absent: the in-cluster service account. */
  readonly connection?: { readonly server: string; readonly tokenFile: string; readonly caFile?: string };
  /** A kubeconfig (src/kube/kubeconfig.ts: tokens, client certificates, exec plugins); absent: --server or in-cluster. */
  readonly kubeconfig?: { readonly file: string; readonly context?: string };
  /** Only this namespace's LVMNodeSets and LVMNodes; "" for all namespaces. */
  readonly namespace: string;
  /** healthz, readyz and metrics. */
  readonly listen: { readonly host: string; readonly port: number };
  readonly workers: number;
  /** LVMNode reconciles at once; absent: the operator's default (16). */
  readonly lvmNodeWorkers?: number;
  readonly resyncMs: number;
  /** How long a node stays out of a set's selector before its LVMNode is deleted; absent: the operator's default (60 s). */
  readonly deselectionGraceMs?: number;
  /**
   * Leader election on a Lease (several replicas, one reconciling); absent: this replica always
   * reconciles (one replica). namespace absent: the pod's own (in a cluster).
   */
  readonly leaderElection?: {
    readonly namespace?: string;
    readonly name: string;
    /** absent: hostname + "_" + a random UUID, as client-go does. */
    readonly identity?: string;
    readonly leaseDurationMs: number;
    readonly renewDeadlineMs: number;
    readonly retryPeriodMs: number;
  };
  /**
   * The admission webhook (src/operator/admission, HTTPS), served by every replica; absent: not served.
   * certDir holds tls.crt and tls.key, re-read when they change.
   */
  readonly webhook?: { readonly host: string; readonly port: number; readonly certDir: string };
  /** Report each set's ProviderReady condition (TopoLVM's CSIDriver and CSINodes). */
  readonly providerReady?: boolean;
  /** Serving certificates the operator issues (src/operator/certificates); absent: someone else does. */
  readonly certificates?: CertificatesConfig;
  /** How the operator calls the node agents. */
  readonly agents: {
    /** The agent pods' namespace. */
    readonly namespace: string;
    /**
     * Per node a TokenRequest for this service account (audience pulumi-lvm-agent/<node>); absent:
     * the one the API token names (in a pod, the operator's own). Or one static token from a file.
     */
    readonly token:
      | { readonly serviceAccount?: { readonly namespace: string; readonly name: string } }
      | { readonly file: string };
    /** HTTPS against this CA (re-read on every use), for this server name; or plain HTTP, opted into. */
    readonly tls: { readonly caFile: string; readonly serverName: string } | "plain-http";
  };
}

export const OPERATOR_USAGE = `usage: pulumi-lvm operator [options]
  --server URL          API server (default: in-cluster, KUBERNETES_SERVICE_HOST and the service account)
  --token-file FILE     bearer token for --server (re-read when it changes)
  --ca-file FILE        CA of --server (default: the system CAs)
  --kubeconfig FILE     reach the API server as this kubeconfig says (exec plugins too), instead of --server
  --context NAME        the kubeconfig's context (default: its current-context)
  --namespace NS        watch LVMNodeSets and LVMNodes in NS only (default: all namespaces)
  --listen HOST:PORT    /healthz, /readyz and /metrics (default 0.0.0.0:8081)
  --workers N           LVMNodeSet reconciles at once, 1 to 64 (default 2)
  --lvmnode-workers N   LVMNode reconciles at once (each waits on its own node's agent), 1 to 256
                        (default 16)
  --resync DURATION     reconcile every set and LVMNode this often anyway (default 5m)
  --deselection-grace DURATION  keep the LVMNode of a node that left a set's selector this long
                        before deleting it; 0s deletes at once (default 60s)
  --agent-namespace NS  namespace of the agent pods (default lvm-system)
  --service-account NS/NAME  request each node's agent token (TokenRequest, audience
                        pulumi-lvm-agent/<node>) for this service account, the operator's own
                        (default: the one the API token names; in a pod, the pod's)
  --agent-token-file F  instead: one static token for every agent, re-read on every use
  --agent-ca-file F     the agents' CA, the only one trusted for them (default ${DEFAULT_AGENT_CA_FILE})
  --agent-server-name N the name in every agent's certificate (default ${AGENT_SERVER_NAME})
  --agent-allow-plain-http  call the agents over plain HTTP: tokens and plans travel unencrypted
  --webhook-listen HOST:PORT  serve the admission webhook over HTTPS here (default: not served)
  --webhook-cert-dir DIR  its certificate: DIR/tls.crt and DIR/tls.key, re-read when they change
                        (default ${DEFAULT_WEBHOOK_CERT_DIR})
${CERTIFICATE_USAGE}
  --provider-ready      report each set's ProviderReady condition: TopoLVM's CSIDriver exists and
                        every selected node's CSINode lists topolvm.io (LvmSystem: operator.args)
  --leader-elect        run as one of several replicas: only the holder of a Lease reconciles
  --leader-election-namespace NS  the Lease's namespace (default: the pod's own)
  --leader-election-name NAME     the Lease's name (default pulumi-lvm-operator)
  --leader-election-identity ID   this replica (default: hostname_<random UUID>)
  --leader-election-lease-duration D  (default 15s)  --leader-election-renew-deadline D  (default 10s)
  --leader-election-retry-period D    (default 2s); lease duration > renew deadline > retry period
Every flag can also be given as PULUMI_LVM_OPERATOR_<FLAG>, e.g. PULUMI_LVM_OPERATOR_NAMESPACE.`;

/** The configuration is invalid; every problem names its flag. */
export class OperatorConfigError extends Error {
  constructor(readonly problems: readonly ValidationProblem[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join("\n")}`);
    this.name = "OperatorConfigError";
  }
}

const FLAGS = {
  server: { type: "string" },
  "token-file": { type: "string" },
  "ca-file": { type: "string" },
  kubeconfig: { type: "string" },
  context: { type: "string" },
  namespace: { type: "string" },
  listen: { type: "string" },
  workers: { type: "string" },
  "lvmnode-workers": { type: "string" },
  resync: { type: "string" },
  "deselection-grace": { type: "string" },
  "agent-namespace": { type: "string" },
  "service-account": { type: "string" },
  "agent-token-file": { type: "string" },
  "agent-ca-file": { type: "string" },
  "agent-server-name": { type: "string" },
  "agent-allow-plain-http": { type: "boolean" },
  "webhook-listen": { type: "string" },
  "webhook-cert-dir": { type: "string" },
  "provider-ready": { type: "boolean" },
  "leader-elect": { type: "boolean" },
  "leader-election-namespace": { type: "string" },
  "leader-election-name": { type: "string" },
  "leader-election-identity": { type: "string" },
  "leader-election-lease-duration": { type: "string" },
  "leader-election-renew-deadline": { type: "string" },
  "leader-election-retry-period": { type: "string" },
  ...CERTIFICATE_FLAGS,
} as const;

const dnsName = (what: string) =>
  z
    .string()
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { error: `must be ${what}` })
    .max(253);

const hostPort = z.string().transform((text, ctx) => {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  if (!host || !(port <= 65535)) {
    ctx.addIssue({ code: "custom", message: `must be HOST:PORT (got ${JSON.stringify(text)})` });
    return z.NEVER;
  }
  return { host, port };
});

const absolutePath = z.string().regex(/^\/[^\0]*$/, { error: "must be an absolute path" });

const schema = z
  .object({
    server: z.url({ protocol: /^https?$/, error: "must be an http(s) URL" }).optional(),
    "token-file": absolutePath.optional(),
    "ca-file": absolutePath.optional(),
    kubeconfig: absolutePath.optional(),
    context: z.string().min(1).optional(),
    namespace: z
      .string()
      .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, { error: "must be a namespace name (or empty)" })
      .max(63)
      .default(""),
    "agent-namespace": z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, { error: "must be a namespace name" })
      .max(63)
      .default("lvm-system"),
    "service-account": z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
        error: "must be NAMESPACE/NAME of a service account",
      })
      .optional(),
    "agent-token-file": absolutePath.optional(),
    "agent-ca-file": absolutePath.default(DEFAULT_AGENT_CA_FILE),
    "agent-server-name": z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { error: "must be a DNS name" })
      .default(AGENT_SERVER_NAME),
    "agent-allow-plain-http": z
      .enum(["true", "false"], { error: "is a switch (true or false in the environment)" })
      .optional(),
    listen: hostPort.prefault("0.0.0.0:8081"),
    "webhook-listen": hostPort.optional(),
    "webhook-cert-dir": absolutePath.default(DEFAULT_WEBHOOK_CERT_DIR),
    "provider-ready": z
      .enum(["true", "false"], { error: "is a switch (true or false in the environment)" })
      .optional(),
    workers: z.coerce.number().int().min(1).max(64).default(2),
    "lvmnode-workers": z.coerce.number().int().min(1).max(256).optional(),
    resync: duration({ zero: false }).prefault("5m"),
    "deselection-grace": duration({ zero: true }).optional(),
    "leader-elect": z
      .enum(["true", "false"], { error: "is a switch (true or false in the environment)" })
      .optional(),
    "leader-election-namespace": dnsName("a namespace name").max(63).optional(),
    "leader-election-name": dnsName("a Lease name (a DNS subdomain)").default("pulumi-lvm-operator"),
    "leader-election-identity": z.string().min(1).max(253).optional(),
    "leader-election-lease-duration": duration({ zero: false }).prefault("15s"),
    "leader-election-renew-deadline": duration({ zero: false }).prefault("10s"),
    "leader-election-retry-period": duration({ zero: false }).prefault("2s"),
    ...certificateFlagsSchema,
  })
  .superRefine((c, ctx) => {
    for (const p of certificateFlagProblems(c))
      ctx.addIssue({ code: "custom", path: [p.path.slice(2)], message: p.message });
    if (c.server && !c["token-file"])
      ctx.addIssue({ code: "custom", path: ["token-file"], message: "--server needs --token-file" });
    if (c["service-account"] && c["agent-token-file"])
      ctx.addIssue({
        code: "custom",
        path: ["agent-token-file"],
        message: "--agent-token-file and --service-account exclude each other",
      });
    if (!c.server && (c["token-file"] || c["ca-file"]))
      ctx.addIssue({
        code: "custom",
        path: ["server"],
        message: "--token-file and --ca-file go with --server",
      });
    if (c.server && c.kubeconfig)
      ctx.addIssue({
        code: "custom",
        path: ["kubeconfig"],
        message: "give --server or --kubeconfig, not both",
      });
    if (c.context && !c.kubeconfig)
      ctx.addIssue({ code: "custom", path: ["context"], message: "--context goes with --kubeconfig" });
    if (c["leader-election-lease-duration"] <= c["leader-election-renew-deadline"])
      ctx.addIssue({
        code: "custom",
        path: ["leader-election-renew-deadline"],
        message: `must be shorter than --leader-election-lease-duration (${c["leader-election-renew-deadline"]} ms >= ${c["leader-election-lease-duration"]} ms): a leader that cannot renew must stop before another can take the Lease`,
      });
    if (c["leader-election-renew-deadline"] <= c["leader-election-retry-period"])
      ctx.addIssue({
        code: "custom",
        path: ["leader-election-retry-period"],
        message: `must be shorter than --leader-election-renew-deadline (${c["leader-election-retry-period"]} ms >= ${c["leader-election-renew-deadline"]} ms)`,
      });
  });

/** "30s", "10m", "1h", "500ms" as milliseconds; `zero`: whether 0 is allowed. */
function duration({ zero }: { zero: boolean }) {
  return z.string().transform((text, ctx) => {
    const m = /^(\d+)(ms|s|m|h)$/.exec(text);
    if (!m || (!zero && Number(m[1]) === 0)) {
      ctx.addIssue({
        code: "custom",
        message: `must be a duration${zero ? "" : " above 0"} such as ${zero ? "0s, " : ""}30s, 10m, 1h (got ${JSON.stringify(text)})`,
      });
      return z.NEVER;
    }
    return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
  });
}

/** Parses and validates flags and environment; throws OperatorConfigError listing every problem. */
export function parseOperatorConfig(argv: readonly string[], env: NodeJS.ProcessEnv): OperatorConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    throw new OperatorConfigError([{ path: "(command line)", message: (e as Error).message }]);
  }
  const input: Record<string, string | undefined> = {};
  for (const flag of Object.keys(FLAGS)) {
    const value = values[flag];
    input[flag] =
      typeof value === "boolean"
        ? String(value)
        : (value ?? env[`PULUMI_LVM_OPERATOR_${flag.toUpperCase().replace(/-/g, "_")}`]);
  }
  const r = schema.safeParse(input);
  if (!r.success)
    throw new OperatorConfigError(
      r.error.issues.map((i) => ({ path: `--${String(i.path[0])}`, message: i.message })),
    );
  const c = r.data;
  return {
    ...(c.server && c["token-file"]
      ? {
          connection: {
            server: c.server,
            tokenFile: c["token-file"],
            ...(c["ca-file"] ? { caFile: c["ca-file"] } : {}),
          },
        }
      : {}),
    ...(c.kubeconfig
      ? { kubeconfig: { file: c.kubeconfig, ...(c.context ? { context: c.context } : {}) } }
      : {}),
    namespace: c.namespace,
    listen: c.listen,
    workers: c.workers,
    ...(c["lvmnode-workers"] !== undefined ? { lvmNodeWorkers: c["lvmnode-workers"] } : {}),
    resyncMs: c.resync,
    ...(c["deselection-grace"] !== undefined ? { deselectionGraceMs: c["deselection-grace"] } : {}),
    ...(c["provider-ready"] === "true" ? { providerReady: true } : {}),
    ...(c["issue-certificates"] ? { certificates: certificatesConfig(c)! } : {}),
    ...(c["webhook-listen"] ? { webhook: { ...c["webhook-listen"], certDir: c["webhook-cert-dir"] } } : {}),
    ...(c["leader-elect"] === "true"
      ? {
          leaderElection: {
            ...(c["leader-election-namespace"] ? { namespace: c["leader-election-namespace"] } : {}),
            name: c["leader-election-name"],
            ...(c["leader-election-identity"] ? { identity: c["leader-election-identity"] } : {}),
            leaseDurationMs: c["leader-election-lease-duration"],
            renewDeadlineMs: c["leader-election-renew-deadline"],
            retryPeriodMs: c["leader-election-retry-period"],
          },
        }
      : {}),
    agents: {
      namespace: c["agent-namespace"],
      token: c["agent-token-file"]
        ? { file: c["agent-token-file"] }
        : c["service-account"]
          ? { serviceAccount: splitName(c["service-account"]) }
          : {},
      tls:
        c["agent-allow-plain-http"] === "true"
          ? "plain-http"
          : { caFile: c["agent-ca-file"], serverName: c["agent-server-name"] },
    },
  };
}

function splitName(text: string): { namespace: string; name: string } {
  const [namespace, name] = text.split("/") as [string, string];
  return { namespace, name };
}
