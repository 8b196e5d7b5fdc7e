import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as path from "node:path";
import YAML from "yaml";
import type { AccessDecision, KubeAuthClient, ResourceAttributes, TokenReviewResult } from "./kube-auth";

/** How to reach and authenticate to an API server. */
export interface KubeConnection {
  /** e.g. "https://10.0.0.1:443" */
  readonly server: string;
  /** PEM of the CA that signed the API server's certificate. @default the system CAs */
  readonly ca?: string;
  /** The agent's own bearer token, read each time (service account tokens rotate). */
  readonly token?: () => string;
  /** Client certificate and key (PEM), for kubeconfigs that use them. */
  readonly cert?: string;
  readonly key?: string;
  /** Only for test clusters. @default false */
  readonly insecureSkipTlsVerify?: boolean;
}

export interface KubeClientOptions {
  /** Per-request timeout. @default 5000 */
  readonly timeoutMs?: number;
}

export const IN_CLUSTER_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** TokenReview and SubjectAccessReview over HTTPS to a real API server. */
export function createKubeAuthClient(conn: KubeConnection, options: KubeClientOptions = {}): KubeAuthClient {
  const post = (apiPath: string, body: unknown) => postJson(conn, apiPath, body, options.timeoutMs ?? 5000);
  return {
    async tokenReview(token: string, audiences: readonly string[]): Promise<TokenReviewResult> {
      const r = await post("/apis/authentication.k8s.io/v1/tokenreviews", {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenReview",
        spec: { token, ...(audiences.length ? { audiences } : {}) },
      });
      const status = (r as { status?: TokenReviewStatus }).status ?? {};
      if (!status.authenticated || !status.user?.username)
        return { authenticated: false, ...(status.error ? { error: status.error } : {}) };
      return {
        authenticated: true,
        user: {
          username: status.user.username,
          ...(status.user.uid ? { uid: status.user.uid } : {}),
          groups: status.user.groups ?? [],
        },
        ...(status.audiences ? { audiences: status.audiences } : {}),
      };
    },
    async subjectAccessReview(
      user: string,
      groups: readonly string[],
      attributes: ResourceAttributes,
    ): Promise<AccessDecision> {
      const r = await post("/apis/authorization.k8s.io/v1/subjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: { user, groups, resourceAttributes: attributes },
      });
      const status =
        (r as { status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string } })
          .status ?? {};
      const reason = [status.reason, status.evaluationError].filter(Boolean).join("; ");
      return { allowed: status.allowed === true && status.denied !== true, ...(reason ? { reason } : {}) };
    },
  };
}

/** The connection a kubeconfig's current (or named) context describes. */
export function connectionFromKubeconfig(file: string, context?: string): KubeConnection {
  const doc = YAML.parse(fs.readFileSync(file, "utf8")) as Kubeconfig;
  const where = (p: string) => `${file}: ${p}`;
  const ctxName = context ?? doc["current-context"];
  const ctx = doc.contexts?.find((c) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(where(`context ${JSON.stringify(ctxName)} not found`));
  const cluster = doc.clusters?.find((c) => c.name === ctx.cluster)?.cluster;
  if (!cluster?.server)
    throw new Error(where(`cluster ${JSON.stringify(ctx.cluster)} not found or has no server`));
  const user = doc.users?.find((u) => u.name === ctx.user)?.user ?? {};
  const rel = (p: string) => (path.isAbsolute(p) ? p : path.join(path.dirname(file), p));
  const pem = (data: string | undefined, fileRef: string | undefined) =>
    data
      ? Buffer.from(data, "base64").toString("utf8")
      : fileRef
        ? fs.readFileSync(rel(fileRef), "utf8")
        : undefined;
  const ca = pem(cluster["certificate-authority-data"], cluster["certificate-authority"]);
  const cert = pem(user["client-certificate-data"], user["client-certificate"]);
  const key = pem(user["client-key-data"], user["client-key"]);
  const staticToken = user.token;
  const tokenFile = user.tokenFile;
  return {
    server: cluster.server,
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(staticToken
      ? { token: () => staticToken }
      : tokenFile
        ? { token: () => fs.readFileSync(rel(tokenFile), "utf8").trim() }
        : {}),
    ...(cluster["insecure-skip-tls-verify"] ? { insecureSkipTlsVerify: true } : {}),
  };
}

/** The connection of a pod: KUBERNETES_SERVICE_HOST/PORT and the mounted service account token and CA. */
export function inClusterConnection(env: NodeJS.ProcessEnv, dir = IN_CLUSTER_DIR): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  const port = env.KUBERNETES_SERVICE_PORT ?? "443";
  if (!host) throw new Error("not in a cluster: KUBERNETES_SERVICE_HOST is not set");
  const tokenPath = path.join(dir, "token");
  if (!fs.existsSync(tokenPath)) throw new Error(`not in a cluster: ${tokenPath} does not exist`);
  return {
    server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`,
    ca: fs.readFileSync(path.join(dir, "ca.crt"), "utf8"),
    token: () => fs.readFileSync(tokenPath, "utf8").trim(),
  };
}

/* ------------------------------------------------------------------------------ helpers ---- */

interface TokenReviewStatus {
  authenticated?: boolean;
  user?: { username?: string; uid?: string; groups?: string[] };
  audiences?: string[];
  error?: string;
}

interface Kubeconfig {
  "current-context"?: string;
  contexts?: Array<{ name: string; context: { cluster: string; user: string } }>;
  clusters?: Array<{
    name: string;
    cluster: {
      server?: string;
      "certificate-authority"?: string;
      "certificate-authority-data"?: string;
      "insecure-skip-tls-verify"?: boolean;
    };
  }>;
  users?: Array<{
    name: string;
    user: {
      token?: string;
      tokenFile?: string;
      "client-certificate"?: string;
      "client-certificate-data"?: string;
      "client-key"?: string;
      "client-key-data"?: string;
    };
  }>;
}

function postJson(conn: KubeConnection, apiPath: string, body: unknown, timeoutMs: number): Promise<unknown> {
  const url = new URL(apiPath, conn.server);
  const payload = JSON.stringify(body);
  const mod = url.protocol === "http:" ? http : https;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method: "POST",
        timeout: timeoutMs,
        ...(conn.ca ? { ca: conn.ca } : {}),
        ...(conn.cert ? { cert: conn.cert } : {}),
        ...(conn.key ? { key: conn.key } : {}),
        ...(conn.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
        headers: {
          accept: "application/json",
          "content-type": "application/json",
          "content-length": Buffer.byteLength(payload),
          ...(conn.token ? { authorization: `Bearer ${conn.token()}` } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on("data", (c: Buffer) => {
          size += c.length;
          if (size > 1024 * 1024) req.destroy(new Error(`POST ${apiPath}: response larger than 1 MiB`));
          else chunks.push(c);
        });
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          if (res.statusCode !== 201 && res.statusCode !== 200)
            return reject(
              new Error(`POST ${url.origin}${apiPath}: HTTP ${res.statusCode}: ${text.slice(0, 500)}`),
            );
          try {
            resolve(JSON.parse(text));
          } catch {
            reject(new Error(`POST ${url.origin}${apiPath}: the response is not JSON`));
          }
        });
      },
    );
    req.on("timeout", () =>
      req.destroy(new Error(`POST ${url.origin}${apiPath}: no answer in ${timeoutMs} ms`)),
    );
    req.on("error", reject);
    req.end(payload);
  });
}
