import { isIP } from "node:net";
import { parseArgs } from "node:util";
import { z } from "zod";
import { parseQuantity, type ValidationProblem } from "../api";
import { nodeAudience } from "../agent-api/auth";
import { devicePathProblem } from "../agent-api/device-names";

/** Where LVMNodes live unless --namespace says otherwise. */
export const DEFAULT_NAMESPACE = "lvm-system";

/**
 * The mount tables discovery reads. Under a --command-prefix such as nsenter into pid 1's namespaces,
 * lvm sees the host's devices, so the mounts must be the host's too: the container's own table shows
 * the overlay root and hides which disk holds the host's `/`.
 */
export const HOST_MOUNTINFO = "/proc/1/mountinfo";
export const OWN_MOUNTINFO = "/proc/self/mountinfo";

/** The agent's configuration, from its command line (and NODE_NAME / KUBERNETES_SERVICE_HOST). */
export interface AgentConfig {
  readonly node: string;
  readonly listen: { readonly host: string; readonly port: number };
  /**
   * HTTPS from these files. `await`: files not there yet are waited for (not ready, every handshake
   * refused) instead of failing the start: a Secret the operator issues after the pod started.
   */
  readonly tls?: { readonly certFile: string; readonly keyFile: string; readonly await?: boolean };
  readonly auth:
    | { readonly mode: "token-file"; readonly file: string }
    | { readonly mode: "kubeconfig"; readonly file: string }
    | { readonly mode: "in-cluster" };
  readonly audiences: readonly string[];
  /** Namespace of the LVMNodes (the SubjectAccessReview's); "" checks access in every namespace. */
  readonly namespace: string;
  readonly authCacheTtlMs: number;
  readonly devices?: readonly string[];
  readonly stateDir: string;
  readonly lvmdConfig: string;
  readonly commandPrefix: readonly string[];
  /** Where discovery reads the mount table: the host's (pid 1's) when commands run through a prefix. */
  readonly mountinfo: string;
  readonly lvmSystemDir?: string;
  /**
   * Run lvm with synchronous I/O: at start the agent writes a copy of the host's lvm configuration
   * (from lvmSystemDir, else /etc/lvm) with use_aio = 0 into <stateDir>/lvm-sync-io and uses that
   * (src/agent/lvm-system-dir.ts, docs/lvm-performance.md). @default false
   */
  readonly lvmSyncIo?: boolean;
  /**
   * Run the reading lvm reports (discovery's `lvm fullreport`) in one long-lived lvm shell
   * (src/agent/lvm-shell.ts): on with lvmSyncIo (the shell needs its own copy of the configuration),
   * off with --no-lvm-shell. Writing commands stay one process per command unless lvmShellWrites.
   * @default lvmSyncIo
   */
  readonly lvmShell?: boolean;
  /**
   * Run the plan's writes (not pvmove) in the lvm shell too (--lvm-shell-writes; needs the shell):
   * each saves a process start and lvm's set-up (docs/lvm-performance.md, "Writes in the shell").
   * @default false
   */
  readonly lvmShellWrites?: boolean;
  /**
   * Keep wipefs/blkid probes and static sysfs attributes between discoveries, keyed so that any write
   * to a device misses (src/inventory/probe-cache.ts); off with --no-probe-cache. An apply's or
   * teardown's discovery never uses it. @default true
   */
  readonly probeCache: boolean;
  /**
   * Where the filesystem that commands run through commandPrefix see is visible to this process (e.g.
   * /proc/1/root for nsenter --target 1 --mount, with hostPID): --lvm-sync-io reads the host's lvm
   * configuration and writes its copy there. Only with lvmSyncIo and a commandPrefix.
   */
  readonly hostRoot?: string;
  readonly lvmConfig?: string;
  readonly bodyLimitBytes: number;
  readonly commandLog?: string;
  readonly commandTimeoutMs: number;
  readonly shutdownGraceMs: number;
}

export const AGENT_USAGE = `usage: pulumi-lvm agent --node <name> [options]
  --node NAME                this node's name (default: $NODE_NAME)
  --listen HOST:PORT         address to serve on (default 127.0.0.1:8080)
  --tls-cert FILE --tls-key FILE   serve HTTPS (required unless HOST is loopback or --allow-plain-http)
  --tls-await                wait for --tls-cert/--tls-key to appear (not ready until then) instead of
                             failing the start: their Secret is issued after the pod started
  --token-file FILE          static tokens, lines "token,user,node-or-*" (local sandbox)
  --kubeconfig FILE          TokenReview/SubjectAccessReview through this API server
                             (neither: in-cluster service account)
  --audience A[,B]           audiences a token must be bound to (default pulumi-lvm-agent/<node>: a token
                             requested for this node only; see src/agent-api/auth.ts)
  --namespace NS             namespace of the LVMNodes, for the access check (default ${DEFAULT_NAMESPACE};
                             "" = access in every namespace, i.e. a ClusterRole binding)
  --auth-cache-ttl DURATION  reuse auth decisions this long (default 10s; 0 disables)
  --devices D1,D2            the only devices this agent sees and touches (default: all)
  --state-dir DIR            journal and lock (default /var/lib/pulumi-lvm/agent)
  --lvmd-config FILE         TopoLVM lvmd.yaml to write (default /etc/topolvm/lvmd.yaml)
  --command-prefix "CMD ..." run commands through this, e.g. "nsenter -t 1 -m -u -i -n -p --"
  --mountinfo FILE           the mount table discovery reads (default /proc/1/mountinfo, the host's,
                             with --command-prefix; else /proc/self/mountinfo)
  --lvm-system-dir DIR       LVM_SYSTEM_DIR for lvm commands
  --lvm-sync-io              lvm with synchronous I/O: a copy of the lvm configuration (--lvm-system-dir,
                             else /etc/lvm) with use_aio = 0, written to <state-dir>/lvm-sync-io at start;
                             the reading reports then run in one lvm shell (<state-dir>/lvm-shell)
  --no-lvm-shell             with --lvm-sync-io: run every lvm command as a process of its own
  --lvm-shell-writes         with --lvm-sync-io: run the plan's writes (not pvmove) in the lvm shell too
  --no-probe-cache           probe every device's signatures and read all of sysfs on every inventory
                             (default: reuse them while a device's write counters and change times say
                             it cannot have changed; an apply or teardown never reuses them)
  --host-root DIR            with --lvm-sync-io and --command-prefix: where the prefix's filesystem is
                             visible to the agent (e.g. /proc/1/root for "nsenter --target 1 --mount")
  --lvm-config STRING        extra lvm --config settings
  --body-limit QUANTITY      largest request body (default 1Mi)
  --command-log FILE         append every command run, one JSON line each
  --command-timeout DURATION kill a command running longer (default 2m; pvmove: 24h)
  --shutdown-grace DURATION  on SIGTERM, wait this long for a running step (default 30s)
  --allow-plain-http         serve plain HTTP on a non-loopback address (tokens travel in clear)`;

/** The configuration is invalid; every problem names its flag. */
export class AgentConfigError extends Error {
  constructor(readonly problems: readonly ValidationProblem[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p.path}: ${p.message}`).join("\n")}`);
    this.name = "AgentConfigError";
  }
}

/** Parses and validates the command line; throws AgentConfigError listing every problem. */
export function parseAgentConfig(argv: readonly string[], env: NodeJS.ProcessEnv): AgentConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    values = parseArgs({ args: [...argv], options: FLAGS, strict: true, allowPositionals: false }).values;
  } catch (e) {
    throw new AgentConfigError([{ path: "(command line)", message: (e as Error).message }]);
  }
  const input = { ...values, node: values.node ?? env.NODE_NAME };
  const r = fieldsSchema.safeParse(input);
  const problems: ValidationProblem[] = r.success
    ? []
    : r.error.issues.map((i) => ({ path: `--${String(i.path[0])}`, message: i.message }));
  // Rules between flags are checked on the raw values too, so every problem is reported at once.
  problems.push(...crossFlagProblems(input, Boolean(env.KUBERNETES_SERVICE_HOST)));
  if (!r.success || problems.length) throw new AgentConfigError(problems);
  const c = r.data;
  const devices = c.devices?.split(",").map((d) => d.trim());
  const limit = parseQuantity(c["body-limit"]);
  const commandPrefix = c["command-prefix"].split(/\s+/).filter(Boolean);
  return {
    node: c.node,
    listen: c.listen,
    ...(c["tls-cert"] && c["tls-key"]
      ? {
          tls: { certFile: c["tls-cert"], keyFile: c["tls-key"], ...(c["tls-await"] ? { await: true } : {}) },
        }
      : {}),
    auth: c["token-file"]
      ? { mode: "token-file", file: c["token-file"] }
      : c.kubeconfig
        ? { mode: "kubeconfig", file: c.kubeconfig }
        : { mode: "in-cluster" },
    audiences: c.audience ? c.audience.split(",").map((a) => a.trim()) : [nodeAudience(c.node)],
    namespace: c.namespace,
    authCacheTtlMs: c["auth-cache-ttl"],
    ...(devices ? { devices } : {}),
    stateDir: c["state-dir"],
    lvmdConfig: c["lvmd-config"],
    commandPrefix,
    mountinfo: c.mountinfo ?? (commandPrefix.length ? HOST_MOUNTINFO : OWN_MOUNTINFO),
    ...(c["lvm-system-dir"] ? { lvmSystemDir: c["lvm-system-dir"] } : {}),
    ...(c["lvm-sync-io"] ? { lvmSyncIo: true } : {}),
    ...(c["lvm-sync-io"] && !c["no-lvm-shell"] ? { lvmShell: true } : {}),
    ...(c["lvm-shell-writes"] ? { lvmShellWrites: true } : {}),
    probeCache: !c["no-probe-cache"],
    ...(c["host-root"] ? { hostRoot: c["host-root"] } : {}),
    ...(c["lvm-config"] ? { lvmConfig: c["lvm-config"] } : {}),
    bodyLimitBytes: limit.ok ? limit.bytes : 0,
    ...(c["command-log"] ? { commandLog: c["command-log"] } : {}),
    commandTimeoutMs: c["command-timeout"],
    shutdownGraceMs: c["shutdown-grace"],
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

const FLAGS = {
  node: { type: "string" },
  listen: { type: "string" },
  "tls-cert": { type: "string" },
  "tls-key": { type: "string" },
  "tls-await": { type: "boolean" },
  "token-file": { type: "string" },
  kubeconfig: { type: "string" },
  audience: { type: "string" },
  namespace: { type: "string" },
  "auth-cache-ttl": { type: "string" },
  devices: { type: "string" },
  "state-dir": { type: "string" },
  "lvmd-config": { type: "string" },
  "command-prefix": { type: "string" },
  mountinfo: { type: "string" },
  "lvm-system-dir": { type: "string" },
  "lvm-sync-io": { type: "boolean" },
  "no-lvm-shell": { type: "boolean" },
  "lvm-shell-writes": { type: "boolean" },
  "no-probe-cache": { type: "boolean" },
  "host-root": { type: "string" },
  "lvm-config": { type: "string" },
  "body-limit": { type: "string" },
  "command-log": { type: "string" },
  "command-timeout": { type: "string" },
  "shutdown-grace": { type: "string" },
  "allow-plain-http": { type: "boolean" },
} as const;

const absolutePath = z.string().regex(/^\/[^\0]*$/, { error: "must be an absolute path" });

const duration = (fallback: string) =>
  z
    .string()
    .default(fallback)
    .transform((text, ctx) => {
      const m = /^(\d+)(ms|s|m|h)$/.exec(text);
      if (!m) {
        ctx.addIssue({
          code: "custom",
          message: `must be a duration such as 500ms, 10s, 2m, 1h (got ${JSON.stringify(text)})`,
        });
        return z.NEVER;
      }
      return Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[m[2] as "ms" | "s" | "m" | "h"];
    });

const fieldsSchema = z.object({
  node: z
    .string({ error: "is required (or set NODE_NAME)" })
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, {
      error: "must be a Kubernetes node name (a DNS-1123 subdomain)",
    })
    .max(253),
  listen: z
    .string()
    .default("127.0.0.1:8080")
    .transform((text, ctx) => {
      const parsed = parseListen(text);
      if (!parsed) {
        ctx.addIssue({
          code: "custom",
          message: `must be HOST:PORT, e.g. 127.0.0.1:8080 or [::1]:8080 (got ${JSON.stringify(text)})`,
        });
        return z.NEVER;
      }
      return parsed;
    }),
  "tls-cert": absolutePath.optional(),
  "tls-key": absolutePath.optional(),
  "tls-await": z.boolean().default(false),
  "token-file": absolutePath.optional(),
  kubeconfig: absolutePath.optional(),
  audience: z.string().optional(),
  namespace: z
    .string()
    .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?)?$/, { error: "must be a namespace name (or empty)" })
    .default(DEFAULT_NAMESPACE),
  "auth-cache-ttl": duration("10s"),
  devices: z.string().optional(),
  "state-dir": absolutePath.default("/var/lib/pulumi-lvm/agent"),
  "lvmd-config": absolutePath.default("/etc/topolvm/lvmd.yaml"),
  "command-prefix": z.string().default(""),
  mountinfo: absolutePath.optional(),
  "lvm-system-dir": absolutePath.optional(),
  "lvm-sync-io": z.boolean().default(false),
  "no-lvm-shell": z.boolean().default(false),
  "lvm-shell-writes": z.boolean().default(false),
  "no-probe-cache": z.boolean().default(false),
  "host-root": absolutePath.optional(),
  "lvm-config": z.string().optional(),
  "body-limit": z.string().default("1Mi"),
  "command-log": absolutePath.optional(),
  "command-timeout": duration("2m"),
  "shutdown-grace": duration("30s"),
  "allow-plain-http": z.boolean().default(false),
});

function parseListen(text: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text);
  const host = m?.[1] ?? m?.[2];
  const port = Number(m?.[3]);
  return m && host && port <= 65535 ? { host, port } : undefined;
}

/** Problems that involve several flags, or a list inside one. */
function crossFlagProblems(
  v: Record<string, string | boolean | undefined>,
  inCluster: boolean,
): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  const add = (flag: string, message: string) => problems.push({ path: `--${flag}`, message });
  if (Boolean(v["tls-cert"]) !== Boolean(v["tls-key"]))
    add(v["tls-cert"] ? "tls-key" : "tls-cert", "--tls-cert and --tls-key go together");
  if (v["tls-await"] && !v["tls-cert"]) add("tls-await", "waits for --tls-cert and --tls-key: give them");
  const listen = parseListen(typeof v.listen === "string" ? v.listen : "127.0.0.1:8080");
  const host = listen?.host;
  const loopback =
    host === "localhost" ||
    host === "::1" ||
    (host !== undefined && isIP(host) === 4 && host.startsWith("127."));
  if (listen && !v["tls-cert"] && !loopback && !v["allow-plain-http"])
    add(
      "listen",
      `${host} is not a loopback address: serve HTTPS (--tls-cert/--tls-key) or pass --allow-plain-http`,
    );
  if (v["token-file"] && v.kubeconfig) add("kubeconfig", "give --token-file or --kubeconfig, not both");
  if (!v["token-file"] && !v.kubeconfig && !inCluster)
    add(
      "token-file",
      "no authentication configured: give --token-file or --kubeconfig, or run in a cluster (KUBERNETES_SERVICE_HOST)",
    );
  if (typeof v.devices === "string") {
    const devices = v.devices.split(",").map((d) => d.trim());
    for (const d of devices) {
      const problem = devicePathProblem(d);
      if (problem) add("devices", `${JSON.stringify(d)} ${problem}`);
    }
    if (new Set(devices).size !== devices.length) add("devices", "lists a device twice");
  }
  if (typeof v["body-limit"] === "string") {
    const limit = parseQuantity(v["body-limit"]);
    if (!limit.ok || limit.bytes < 1024)
      add("body-limit", `must be a quantity of at least 1Ki (got ${JSON.stringify(v["body-limit"])})`);
  }
  // Through a prefix (nsenter) lvm runs in another mount namespace: the host's configuration and the
  // copy lvm is given are paths there, which the agent reaches under --host-root.
  const prefixed = typeof v["command-prefix"] === "string" && v["command-prefix"].trim() !== "";
  if (v["lvm-sync-io"] && prefixed && v["host-root"] === undefined)
    add(
      "lvm-sync-io",
      "with --command-prefix lvm runs in another mount namespace: give --host-root, where that namespace's filesystem is visible to the agent (e.g. /proc/1/root for nsenter --target 1 --mount), or write the copy on the host and pass --lvm-system-dir",
    );
  if (v["no-lvm-shell"] && !v["lvm-sync-io"])
    add("no-lvm-shell", "is only used with --lvm-sync-io (without it every lvm command is one-shot already)");
  if (v["lvm-shell-writes"] && (!v["lvm-sync-io"] || v["no-lvm-shell"]))
    add("lvm-shell-writes", "runs writes in the lvm shell, which needs --lvm-sync-io and not --no-lvm-shell");
  if (v["host-root"] !== undefined && !(v["lvm-sync-io"] && prefixed))
    add("host-root", "is only used by --lvm-sync-io with --command-prefix");
  if (typeof v.audience === "string" && v.audience.split(",").some((a) => !a.trim()))
    add("audience", "has an empty audience");
  return problems;
}
