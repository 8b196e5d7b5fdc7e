import * as fs from "node:fs";
import * as path from "node:path";

/**
 * How the operator reaches the API server. Token and CA are functions, called for every request,
 * because both rotate under a running pod (bound service account tokens expire within the hour).
 */
export interface KubeConnection {
  /** @example "https://10.0.0.1:443" */
  readonly server: string;
  /** The bearer token. */
  readonly token: () => string;
  /** PEM of the CA that signed the API server's certificate; undefined: the system CAs. */
  readonly ca: () => string | undefined;
}

/** Where a pod's service account token and CA are mounted. */
export const SERVICE_ACCOUNT_DIR = "/var/run/secrets/kubernetes.io/serviceaccount";

/** The connection of a pod: KUBERNETES_SERVICE_HOST/PORT and the mounted token and CA, re-read when they change. */
export function inClusterConnection(env: NodeJS.ProcessEnv, dir = SERVICE_ACCOUNT_DIR): KubeConnection {
  const host = env.KUBERNETES_SERVICE_HOST;
  if (!host) throw new Error("not in a cluster: KUBERNETES_SERVICE_HOST is not set (give --server)");
  const port = env.KUBERNETES_SERVICE_PORT ?? "443";
  const token = rereadingFile(path.join(dir, "token"));
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
}): KubeConnection {
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
      throw new Error(`cannot read ${file}: ${(e as Error).message}`);
    }
    const key = `${stat.mtimeMs}:${stat.size}:${stat.ino}`;
    if (seen?.key !== key) seen = { key, text: fs.readFileSync(file, "utf8").trim() };
    return seen.text;
  };
}
