import { execFile } from "node:child_process";
import { z } from "zod";
import type { ExecCredential } from "./connection";

/**
 * A kubeconfig user's `exec` section: a program that prints an ExecCredential (the usual EKS, GKE
 * and AKS kubeconfigs: `aws eks get-token`, `gke-gcloud-auth-plugin`, `kubelogin`).
 */
export interface ExecConfig {
  /** client.authentication.k8s.io/v1 or v1beta1 */
  readonly apiVersion: string;
  /** Resolved already: absolute, or a name looked up in PATH. */
  readonly command: string;
  readonly args?: readonly string[];
  readonly env?: ReadonlyArray<{ readonly name: string; readonly value: string }>;
  readonly installHint?: string;
  readonly provideClusterInfo?: boolean;
}

export interface ExecPluginOptions {
  /** Names the plugin in errors, e.g. "kubeconfig /home/me/.kube/config: users[eks].user.exec". */
  readonly what: string;
  /** Sent in KUBERNETES_EXEC_INFO when the plugin asks for it (provideClusterInfo). */
  readonly cluster: { readonly server: string; readonly "certificate-authority-data"?: string };
  /** @default 60000 */
  readonly timeoutMs?: number;
  /** A credential is run for again this long before it expires. @default 60000 */
  readonly refreshBeforeMs?: number;
  /** @default Date.now */
  readonly now?: () => number;
}

export const EXEC_API_VERSIONS = ["client.authentication.k8s.io/v1", "client.authentication.k8s.io/v1beta1"];

/**
 * The credential an exec plugin gives, as client-go gets it: the program runs (never in a shell)
 * with KUBERNETES_EXEC_INFO, its ExecCredential is kept until shortly before its
 * expirationTimestamp (or, without one, for the life of the process), and concurrent requests
 * share one run. Errors name the plugin, the command, its exit code and its stderr, never its
 * output (which holds the credential).
 */
export function execCredentialSource(
  config: ExecConfig,
  options: ExecPluginOptions,
): () => Promise<ExecCredential> {
  const now = options.now ?? Date.now;
  const refreshBefore = options.refreshBeforeMs ?? 60_000;
  let cached: { credential: ExecCredential; expiresAt: number } | undefined;
  let running: Promise<ExecCredential> | undefined;
  const refresh = async (): Promise<ExecCredential> => {
    const out = await run(config, options);
    const parsed = execCredentialSchema.safeParse(parseJson(out));
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new Error(
        `${options.what}: ${config.command} did not print an ExecCredential (${issue?.path.join(".") || "(the output)"}: ${issue?.message ?? "?"})`,
      );
    }
    if (parsed.data.apiVersion !== config.apiVersion)
      throw new Error(
        `${options.what}: ${config.command} printed an ExecCredential of ${parsed.data.apiVersion}, not of ${config.apiVersion}`,
      );
    const { token, clientCertificateData, clientKeyData, expirationTimestamp } = parsed.data.status;
    if (!token && !(clientCertificateData && clientKeyData))
      throw new Error(
        `${options.what}: ${config.command} printed neither a token nor a client certificate and key`,
      );
    const credential = {
      ...(token ? { token } : {}),
      ...(clientCertificateData ? { clientCertificateData } : {}),
      ...(clientKeyData ? { clientKeyData } : {}),
    };
    cached = {
      credential,
      expiresAt: expirationTimestamp ? Date.parse(expirationTimestamp) - refreshBefore : Infinity,
    };
    return credential;
  };
  return () => {
    if (cached && now() < cached.expiresAt) return Promise.resolve(cached.credential);
    running ??= refresh().finally(() => (running = undefined));
    return running;
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

const execCredentialSchema = z.looseObject({
  apiVersion: z.string(),
  kind: z.literal("ExecCredential"),
  status: z.looseObject({
    token: z.string().optional(),
    clientCertificateData: z.string().optional(),
    clientKeyData: z.string().optional(),
    expirationTimestamp: z.string().optional(),
  }),
});

function run(config: ExecConfig, options: ExecPluginOptions): Promise<string> {
  const info = {
    apiVersion: config.apiVersion,
    kind: "ExecCredential",
    spec: {
      interactive: false,
      ...(config.provideClusterInfo ? { cluster: options.cluster } : {}),
    },
  };
  const env: NodeJS.ProcessEnv = { ...process.env, KUBERNETES_EXEC_INFO: JSON.stringify(info) };
  for (const { name, value } of config.env ?? []) env[name] = value;
  const timeout = options.timeoutMs ?? 60_000;
  return new Promise((resolve, reject) => {
    execFile(
      config.command,
      [...(config.args ?? [])],
      { env, timeout, killSignal: "SIGKILL", maxBuffer: 1024 * 1024, encoding: "utf8" },
      (error, stdout, stderr) => {
        if (!error) return resolve(stdout);
        const e = error as NodeJS.ErrnoException & { code?: unknown; killed?: boolean };
        const why =
          e.code === "ENOENT"
            ? `${config.command} not found${config.installHint ? ` (${config.installHint.trim()})` : ""}`
            : e.killed
              ? `${config.command} did not finish within ${timeout} ms`
              : `${config.command} failed (exit code ${typeof e.code === "number" ? e.code : "none"})${stderr.trim() ? `: ${stderr.trim().slice(0, 500)}` : ""}`;
        reject(new Error(`${options.what}: ${why}`, { cause: error }));
      },
    );
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
