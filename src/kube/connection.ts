import * as fs from "node:fs";
import * as path from "node:path";
import type { TlsOptions } from "./http";

/**
 * How to reach and authenticate to an API server: the one connection type of the agent, the
 * operator, the client of the agents and the provider. Token and CA are functions, called for
 * every request, because both rotate under a running pod (bound service account tokens expire
 * within the hour); a kubeconfig's exec plugin is run again when its credential expires.
 */
export interface KubeConnection {
  /**
   * The API server's URL, with the path prefix some proxies put in front of it.
   * @example "https://10.0.0.1:443"
   * @example "https://rancher.example/k8s/clusters/c-m-1"
   */
  readonly server: string;
  /** The bearer token. */
  readonly token?: () => string;
  /** PEM of the CA that signed the API server's certificate; undefined: the system CAs. */
  readonly ca?: () => string | undefined;
  /** Client certificate and key (PEM), for kubeconfigs that use them. */
  readonly cert?: string;
  readonly key?: string;
  /** The name the API server's certificate is checked against, instead of the server's host. @default the host */
  readonly tlsServerName?: string;
  /** Only for test clusters. @default false */
  readonly insecureSkipTlsVerify?: boolean;
  /** A credential a program gives (a kubeconfig's exec plugin, exec-credential.ts): asked for every request, cached by it. */
  readonly exec?: () => Promise<ExecCredential>;
}

/** What an exec credential plugin prints (client.authentication.k8s.io ExecCredential status). */
export interface ExecCredential {
  readonly token?: string;
  readonly clientCertificateData?: string;
  readonly clientKeyData?: string;
}

/** The headers and TLS options of one request to the API server. */
export interface KubeCredentials {
  readonly headers: Record<string, string>;
  readonly tls?: TlsOptions;
}

/** The caller's credentials for one request: a bearer token header and/or TLS options. */
export async function requestCredentials(conn: KubeConnection): Promise<KubeCredentials> {
  const exec = conn.exec ? await conn.exec() : undefined;
  const ca = conn.ca?.();
  const cert = exec?.clientCertificateData ?? conn.cert;
  const key = exec?.clientKeyData ?? conn.key;
  const token = exec?.token ?? conn.token?.();
  const tls: TlsOptions = {
    ...(ca ? { ca } : {}),
    ...(cert ? { cert } : {}),
    ...(key ? { key } : {}),
    ...(conn.tlsServerName ? { servername: conn.tlsServerName } : {}),
    ...(conn.insecureSkipTlsVerify ? { rejectUnauthorized: false } : {}),
  };
  return {
    headers: token ? { authorization: `Bearer ${token}` } : {},
    ...(Object.keys(tls).length ? { tls } : {}),
  };
}

/** `path` on the API server, keeping a path prefix of the server URL (e.g. Rancher's /k8s/clusters/<id>). */
export function apiUrl(conn: Pick<KubeConnection, "server">, path: string): URL {
  const url = new URL(conn.server);
  const [pathname = "", query] = path.split("?", 2);
  url.pathname = `${url.pathname.replace(/\/+$/, "")}/${pathname.replace(/^\/+/, "")}`;
  url.search = query ?? "";
  return url;
}

/** Where a pod's service account token and CA are mounted. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** A connection whose token and CA are always there (in a pod, or given as files). */
export type FileConnection = KubeConnection & {
  readonly token: () => string;
  readonly ca: () => string | undefined;
};

/** The connection of a pod: KUBERNETES_SERVICE_HOST/PORT and the mounted token and CA, re-read when they change. */
export function inClusterConnection(env: NodeJS.ProcessEnv, dir = SERVICE_ACCOUNT_DIR): FileConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  if (!host) throw new Error("not in a cluster: KUBERNETES_SERVICE_HOST is not set (give --server)");
  const port = env.KUBERNETES_SERVICE_PORT ?? "443";
  const tokenPath = path.join(dir, "token");
  if (!fs.existsSync(tokenPath)) throw new Error(`not in a cluster: ${tokenPath} does not exist`);
  const token = rereadingFile(tokenPath);
  const ca = rereadingFile(path.join(dir, "ca.crt"));
  token(); // fail at start-up, naming the file, rather than on the first request
  ca();
  return { server: `https://${host.includes(":") ? `[${host}]` : host}:${port}`, token, ca };
}

/** An explicit server, token file and (optionally) CA file, for local runs and tests. */
export function explicitConnection(args: {
  readonly server: string;
  readonly tokenFile: string;
  readonly caFile?: string;
}): FileConnection {
  const token = rereadingFile(args.tokenFile);
  token();
  const caFile = args.caFile;
  const ca = caFile ? rereadingFile(caFile) : () => undefined;
  ca();
  return { server: args.server, token, ca };
}

/**
 * A file's trimmed content, read again whenever its modification time or size changes (kubelet
 * swaps the projected volume's symlink atomically, which changes both). Errors name the file.
 */
export function rereadingFile(file: string): () => string {
  let seen: { key: string; text: string } | undefined;
  return () => {
    let stat: fs.Stats;
    try {
      stat = fs.statSync(file);
    } catch (e) {
      throw new Error(`cannot read ${file}: ${(e as Error).message}`, { cause: e });
    }
    const key = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    if (seen?.key !== key) seen = { key, text: fs.readFileSync(file, "utf8").trim() };
    return seen.text;
  };
}
