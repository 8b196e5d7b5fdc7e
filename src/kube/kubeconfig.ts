import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import YAML from "yaml";
import { z } from "zod";
import type { KubeConnection } from "./connection";
import { EXEC_API_VERSIONS, execCredentialSource } from "./exec-credential";

/** Where a kubeconfig's text comes from. */
export interface KubeconfigSource {
  /** Names the kubeconfig in every error, e.g. its path. @example "/home/me/.kube/config" */
  readonly name: string;
  /** Relative file references (certificate-authority, client-certificate, client-key, tokenFile) are resolved here. */
  readonly baseDir: string;
  /** Reads a referenced file. @default fs.readFileSync(file, "utf8") */
  readonly readFile?: (file: string) => string;
}

/** One kubeconfig file's text and where it comes from. */
export interface KubeconfigText extends KubeconfigSource {
  readonly text: string;
}

/**
 * The connection a kubeconfig's current (or named) context describes: server (with a path
 * prefix), CA, client certificate and key (inline `-data` or files), a token or tokenFile, an
 * `exec` credential plugin (exec-credential.ts), tls-server-name and insecure-skip-tls-verify.
 * What it cannot do (auth-provider, basic auth, proxy-url) is an error naming the field, never
 * silently ignored. Errors never quote credentials.
 *
 * Why not `@kubernetes/client-node`'s KubeConfig: it is an ES module only (1.x; 2.x needs Node 22
 * through undici 8), which the CommonJS package, the Pulumi programs that load it and ts-jest do
 * not load without a second build, and it brings sixteen dependencies (ws, openid-client, tar-fs,
 * socks...) into every Pulumi program and the agent's image for what is a YAML merge, a file read
 * and a child process here. Its HTTP stack is fetch, which gives up after 300 s of silence.
 */
export function connectionFromKubeconfigText(
  text: string,
  source: KubeconfigSource,
  context?: string,
): KubeConnection {
  return connectionFromKubeconfigs([{ ...source, text }], context);
}

/** The connection of a kubeconfig file (relative references resolved beside it). */
export function connectionFromKubeconfigFile(file: string, context?: string): KubeConnection {
  return connectionFromKubeconfigs([readKubeconfig(file)], context);
}

/**
 * The kubeconfig files as kubectl finds them: the `KUBECONFIG` list (path.delimiter-separated,
 * missing files skipped as kubectl does), else ~/.kube/config.
 */
export function kubeconfigFilesFromEnv(env: NodeJS.ProcessEnv): string[] {
  const list = (env.KUBECONFIG ?? "").split(path.delimiter).filter(Boolean);
  if (list.length) return list.filter((f) => fs.existsSync(f));
  return [path.join(env.HOME ?? os.homedir(), ".kube", "config")];
}

/** The connection of the merged kubeconfig files `KUBECONFIG` lists (or ~/.kube/config). */
export function connectionFromEnvKubeconfig(env: NodeJS.ProcessEnv, context?: string): KubeConnection {
  const files = kubeconfigFilesFromEnv(env);
  if (!files.length)
    throw new Error(`kubeconfig: none of the files KUBECONFIG lists exists (${env.KUBECONFIG})`);
  return connectionFromKubeconfigs(files.map(readKubeconfig), context);
}

/**
 * Several kubeconfigs merged as kubectl merges a KUBECONFIG list: the first file that sets
 * current-context wins, and so does the first context, cluster and user of each name.
 */
export function connectionFromKubeconfigs(
  files: readonly KubeconfigText[],
  context?: string,
): KubeConnection {
  const listName = files.map((f) => f.name).join(path.delimiter);
  const fail = (name: string, what: string): never => {
    throw new Error(`kubeconfig ${name}: ${what}`);
  };
  const docs = files.map((file) => ({
    file,
    doc: parseKubeconfig(file.text, (what) => fail(file.name, what)),
  }));
  const first = <K extends "contexts" | "clusters" | "users">(key: K, name: string) => {
    for (const { file, doc } of docs) {
      const entry = (doc[key] as Array<{ name: string }>).find((e) => e.name === name);
      if (entry) return { file, entry: entry as (typeof doc)[K][number] };
    }
    return undefined;
  };
  const contextName = context ?? docs.map(({ doc }) => doc["current-context"]).find(Boolean);
  if (!contextName) return fail(listName, "has no current-context; name a context");
  const ctx = first("contexts", contextName)?.entry.context;
  if (!ctx) return fail(listName, `context ${JSON.stringify(contextName)} not found`);
  const clusterFound = first("clusters", ctx.cluster);
  if (!clusterFound)
    return fail(listName, `cluster ${JSON.stringify(ctx.cluster)} (of context ${contextName}) not found`);
  const userFound = ctx.user === undefined ? undefined : first("users", ctx.user);
  if (ctx.user !== undefined && !userFound)
    fail(listName, `user ${JSON.stringify(ctx.user)} (of context ${contextName}) not found`);
  const cluster = clusterFound.entry.cluster;
  const user = userFound?.entry.user ?? {};
  const userFile = userFound?.file ?? clusterFound.file;
  const at = (field: string) => `users[${userFound?.entry.name}].user.${field}`;
  for (const field of UNSUPPORTED_USER_FIELDS)
    if (user[field] !== undefined) fail(userFile.name, `${at(field)}: ${UNSUPPORTED[field]}`);
  if (cluster["proxy-url"] !== undefined)
    fail(
      clusterFound.file.name,
      `clusters[${ctx.cluster}].cluster.proxy-url: proxies are not supported; reach the API server directly`,
    );

  const reader = (file: KubeconfigText) => {
    const readFile = file.readFile ?? ((f: string) => fs.readFileSync(f, "utf8"));
    const resolve = (f: string) => (path.isAbsolute(f) ? f : path.join(file.baseDir, f));
    const pem = (data: string | undefined, f: string | undefined) =>
      data ? Buffer.from(data, "base64").toString("utf8") : f ? readFile(resolve(f)) : undefined;
    return { readFile, resolve, pem };
  };
  const ofCluster = reader(clusterFound.file);
  const ofUser = reader(userFile);
  const ca = ofCluster.pem(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  const cert = ofUser.pem(user["client-certificate-data"], user["client-certificate"]);
  const key = ofUser.pem(user["client-key-data"], user["client-key"]);
  const { token, tokenFile, exec } = user;
  if (exec && !EXEC_API_VERSIONS.includes(exec.apiVersion))
    fail(
      userFile.name,
      `${at("exec.apiVersion")}: ${exec.apiVersion} is not one of ${EXEC_API_VERSIONS.join(", ")}`,
    );
  return {
    server: cluster.server,
    ...(ca ? { ca: () => ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(token
      ? { token: () => token }
      : tokenFile
        ? { token: () => ofUser.readFile(ofUser.resolve(tokenFile)).trim() }
        : {}),
    ...(exec
      ? {
          exec: execCredentialSource(
            {
              ...exec,
              env: exec.env ?? [],
              // As client-go: a relative command with a directory is beside the kubeconfig; a bare name is looked up in PATH.
              command: exec.command.includes("/") ? ofUser.resolve(exec.command) : exec.command,
            },
            {
              what: `kubeconfig ${userFile.name}: ${at("exec")}`,
              cluster: {
                server: cluster.server,
                ...(cluster["certificate-authority-data"]
                  ? { "certificate-authority-data": cluster["certificate-authority-data"] }
                  : {}),
              },
            },
          ),
        }
      : {}),
    ...(cluster["tls-server-name"] ? { tlsServerName: cluster["tls-server-name"] } : {}),
    ...(cluster["insecure-skip-tls-verify"] ? { insecureSkipTlsVerify: true } : {}),
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

function readKubeconfig(file: string): KubeconfigText {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new Error(`kubeconfig ${file}: cannot read it: ${(e as Error).message}`, { cause: e });
  }
  return { name: file, baseDir: path.dirname(file), text };
}

function parseKubeconfig(text: string, fail: (what: string) => never): z.infer<typeof kubeconfigSchema> {
  let parsedYaml: unknown;
  try {
    parsedYaml = YAML.parse(text);
  } catch {
    // YAML's message quotes the offending line, which may hold a credential.
    fail("is not valid YAML");
  }
  const parsed = kubeconfigSchema.safeParse(parsedYaml ?? {});
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    return fail(`${issue.path.join(".") || "(root)"}: ${issue.message}`);
  }
  return parsed.data;
}

const UNSUPPORTED = {
  "auth-provider":
    "auth-provider plugins are not supported (client-go dropped its gcp and azure providers in Kubernetes 1.26); use the exec plugin that replaced it (gke-gcloud-auth-plugin, kubelogin) or a token or a client certificate",
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
            exec: z
              .looseObject({
                apiVersion: z.string({ error: "is required" }),
                command: z.string({ error: "is required" }).min(1),
                args: z.array(z.string()).optional(),
                env: z.array(z.object({ name: z.string(), value: z.string() })).nullish(),
                installHint: z.string().optional(),
                provideClusterInfo: z.boolean().optional(),
              })
              .optional(),
            "auth-provider": z.unknown().optional(),
            username: z.unknown().optional(),
            password: z.unknown().optional(),
          })
          .nullish(),
      }),
    )
    .default([]),
});
