import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import { z } from "zod";

/** How to reach and authenticate to an API server. */
export interface KubeConnection {
  /** e.g. "https://10.0.0.1:443" */
  readonly server: string;
  /** PEM of the CA that signed the API server's certificate. @default the system CAs */
  readonly ca?: string;
  /** The bearer token, read each time it is sent (service account tokens and token files rotate). */
  readonly token?: () => string;
  /** Client certificate and key (PEM), for kubeconfigs that use them. */
  readonly cert?: string;
  readonly key?: string;
  /** The name the API server's certificate is checked against, instead of the server's host. @default the host */
  readonly tlsServerName?: string;
  /** Only for test clusters. @default false */
  readonly insecureSkipTlsVerify?: boolean;
}

/** Where a kubeconfig's text comes from. */
export interface KubeconfigSource {
  /** Names the kubeconfig in every error, e.g. its path. @example "/home/me/.kube/config" */
  readonly name: string;
  /** Relative file references (certificate-authority, client-certificate, client-key, tokenFile) are resolved here. */
  readonly baseDir: string;
  /** Reads a referenced file. @default fs.readFileSync(file, "utf8") */
  readonly readFile?: (file: string) => string;
}

/**
 * The connection a kubeconfig's current (or named) context describes: server, CA, client
 * certificate and key (inline `-data` or files), a token or tokenFile, tls-server-name and
 * insecure-skip-tls-verify. What it cannot do (exec credential plugins, auth-provider, basic auth,
 * proxy-url) is an error naming the field, never silently ignored. Errors never quote credentials.
 */
export function connectionFromKubeconfigText(
  text: string,
  source: KubeconfigSource,
  context?: string,
): KubeConnection {
  const fail = (what: string): never => {
    throw new Error(`kubeconfig ${source.name}: ${what}`);
  };
  let parsedYaml: unknown;
  try {
    parsedYaml = YAML.parse(text);
  } catch {
    // YAML's message quotes the offending line, which may hold a credential.
    fail("is not valid YAML");
  }
  const parsed = kubeconfigSchema.safeParse(parsedYaml);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail(`${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  const doc = parsed.data;
  const contextName = context ?? doc["current-context"];
  if (!contextName) fail("has no current-context; name a context");
  const ctx = doc.contexts.find((c) => c.name === contextName)?.context;
  if (!ctx) return fail(`context ${JSON.stringify(contextName)} not found`);
  const cluster = doc.clusters.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster) return fail(`cluster ${JSON.stringify(ctx.cluster)} (of context ${contextName}) not found`);
  const userEntry = ctx.user === undefined ? undefined : doc.users.find((u) => u.name === ctx.user);
  if (ctx.user !== undefined && !userEntry)
    fail(`user ${JSON.stringify(ctx.user)} (of context ${contextName}) not found`);
  const user = userEntry?.user ?? {};
  const at = (field: string) => `users[${userEntry?.name}].user.${field}`;
  for (const field of UNSUPPORTED_USER_FIELDS)
    if (user[field] !== undefined) fail(`${at(field)}: ${UNSUPPORTED[field]}`);
  if (cluster["proxy-url"] !== undefined)
    fail(
      `clusters[${ctx.cluster}].cluster.proxy-url: proxies are not supported; reach the API server directly`,
    );

  const readFile = source.readFile ?? ((file: string) => fs.readFileSync(file, "utf8"));
  const resolve = (file: string) => (path.isAbsolute(file) ? file : path.join(source.baseDir, file));
  const pem = (data: string | undefined, file: string | undefined) =>
    data ? Buffer.from(data, "base64").toString("utf8") : file ? readFile(resolve(file)) : undefined;
  const ca = pem(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  const cert = pem(user["client-certificate-data"], user["client-certificate"]);
  const key = pem(user["client-key-data"], user["client-key"]);
  const { token, tokenFile } = user;
  return {
    server: cluster.server,
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(token
      ? { token: () => token }
      : tokenFile
        ? { token: () => readFile(resolve(tokenFile)).trim() }
        : {}),
    ...(cluster["tls-server-name"] ? { tlsServerName: cluster["tls-server-name"] } : {}),
    ...(cluster["insecure-skip-tls-verify"] ? { insecureSkipTlsVerify: true } : {}),
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

const UNSUPPORTED = {
  exec: "exec credential plugins are not supported; use a kubeconfig with a token (e.g. from `kubectl create token`) or a client certificate",
  "auth-provider":
    "auth-provider plugins are not supported; use a kubeconfig with a token or a client certificate",
  username: "basic authentication is not supported; use a token or a client certificate",
  password: "basic authentication is not supported; use a token or a client certificate",
} as const;
const UNSUPPORTED_USER_FIELDS = Object.keys(UNSUPPORTED) as (keyof typeof UNSUPPORTED)[];

const kubeconfigSchema = z.looseObject({
  "current-context": z.string().optional(),
  contexts: z
    .array(
      z.looseObject({
        name: z.string(),
        context: z.looseObject({ cluster: z.string(), user: z.string().optional() }),
      }),
    )
    .default([]),
  clusters: z
    .array(
      z.looseObject({
        name: z.string(),
        cluster: z.looseObject({
          server: z.string({ error: "is required" }),
          "certificate-authority": z.string().optional(),
          "certificate-authority-data": z.string().optional(),
          "tls-server-name": z.string().optional(),
          "insecure-skip-tls-verify": z.boolean().optional(),
          "proxy-url": z.unknown().optional(),
        }),
      }),
    )
    .default([]),
  users: z
    .array(
      z.looseObject({
        name: z.string(),
        user: z
          .looseObject({
            token: z.string().optional(),
            tokenFile: z.string().optional(),
            "client-certificate": z.string().optional(),
            "client-certificate-data": z.string().optional(),
            "client-key": z.string().optional(),
            "client-key-data": z.string().optional(),
            exec: z.unknown().optional(),
            "auth-provider": z.unknown().optional(),
            username: z.unknown().optional(),
            password: z.unknown().optional(),
          })
          .nullish(),
      }),
    )
    .default([]),
});
