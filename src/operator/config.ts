import { parseArgs } from "node:util";
import { z } from "zod";
import type { ValidationProblem } from "../api";
import { DEFAULT_AGENT_TOKEN_FILE } from "../agent-api/auth";

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
  readonly resyncMs: number;
  /** How the operator calls the node agents. */
  readonly agents: {
    /** The agent pods' namespace. */
    readonly namespace: string;
    /** The projected token for audience pulumi-lvm-agent (re-read on every use). */
    readonly tokenFile: string;
    /** CA of agents serving https. */
    readonly caFile?: string;
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
  --workers N           reconciles at once, 1 to 64 (default 2)
  --resync DURATION     reconcile every set and LVMNode this often anyway (default 5m)
  --agent-namespace NS  namespace of the agent pods (default lvm-system)
  --agent-token-file F  token for the agents, audience pulumi-lvm-agent (default ${DEFAULT_AGENT_TOKEN_FILE})
  --agent-ca-file F     CA of agents serving https (default: the system CAs)
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
  resync: { type: "string" },
  "agent-namespace": { type: "string" },
  "agent-token-file": { type: "string" },
  "agent-ca-file": { type: "string" },
} as const;

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
    "agent-token-file": absolutePath.default(DEFAULT_AGENT_TOKEN_FILE),
    "agent-ca-file": absolutePath.optional(),
    listen: z
      .string()
      .default("0.0.0.0:8081")
      .transform((text, ctx) => {
        const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
        const host = m?.[1] ?? m?.[2];
        const port = Number(m?.[3]);
        if (!host || !(port <= 65535)) {
          ctx.addIssue({ code: "custom", message: `must be HOST:PORT (got ${JSON.stringify(text)})` });
          return z.NEVER;
        }
        return { host, port };
      }),
    workers: z.coerce.number().int().min(1).max(64).default(2),
    resync: z
      .string()
      .default("5m")
      .transform((text, ctx) => {
        const m = /^(\d+)(ms|s|m|h)$/.exec(text);
        if (!m || Number(m[1]) === 0) {
          ctx.addIssue({
            code: "custom",
            message: `must be a duration above 0 such as 30s, 10m, 1h (got ${JSON.stringify(text)})`,
          });
          return z.NEVER;
        }
        return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
      }),
  })
  .superRefine((c, ctx) => {
    if (c.server && !c["token-file"])
      ctx.addIssue({ code: "custom", path: ["token-file"], message: "--server needs --token-file" });
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
  });

/** Parses and validates flags and environment; throws OperatorConfigError listing every problem. */
export function parseOperatorConfig(argv: readonly string[], env: NodeJS.ProcessEnv): OperatorConfig {
  let values: Record<string, string | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    throw new OperatorConfigError([{ path: "(command line)", message: (e as Error).message }]);
  }
  const input: Record<string, string | undefined> = {};
  for (const flag of Object.keys(FLAGS))
    input[flag] = values[flag] ?? env[`PULUMI_LVM_OPERATOR_${flag.toUpperCase().replace(/-/g, "_")}`];
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
    resyncMs: c.resync,
    agents: {
      namespace: c["agent-namespace"],
      tokenFile: c["agent-token-file"],
      ...(c["agent-ca-file"] ? { caFile: c["agent-ca-file"] } : {}),
    },
  };
}
