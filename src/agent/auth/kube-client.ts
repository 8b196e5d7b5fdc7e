import * as fs from "node:fs";
import * as http from "node:http";
import * as https from "node:https";
import * as path from "node:path";
import type { AccessDecision, KubeAuthClient, ResourceAttributes, TokenReviewResult } from "./kube-auth";
import { connectionFromKubeconfigText, type KubeConnection } from "./kubeconfig";

export type { KubeConnection } from "./kubeconfig";

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

/** The connection a kubeconfig file's current (or named) context describes (kubeconfig.ts). */
export function connectionFromKubeconfig(file: string, context?: string): KubeConnection {
  return connectionFromKubeconfigText(
    fs.readFileSync(file, "utf8"),
    { name: file, baseDir: path.dirname(file) },
    context,
  );
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
        ...(conn.tlsServerName ? { servername: conn.tlsServerName } : {}),
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
