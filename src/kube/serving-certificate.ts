import { createHash, X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type * as tls from "node:tls";

/** How often the files are read when no change event came (some mounts send none). */
export const SERVING_CERTIFICATE_POLL_MS = 10_000;

export interface ServingCertificateFiles {
  readonly certFile: string;
  readonly keyFile: string;
  /** Options every context gets besides cert and key, e.g. `{ minVersion: "TLSv1.2" }`. */
  readonly options?: tls.SecureContextOptions;
  /** @default SERVING_CERTIFICATE_POLL_MS */
  readonly pollMs?: number;
  readonly log?: (entry: Record<string, unknown>) => void;
  /** The server was created with no certificate (the files were not there yet). */
  readonly startedEmpty?: boolean;
}

/**
 * Keeps a TLS server's certificate in step with its files, with no restart: a kubernetes.io/tls
 * Secret volume (the kubelet swaps its `..data` link when the Secret changes: cert-manager renewed
 * it, or `pulumi up` re-issued it) or any pair of files replaced in place. The directories are
 * watched, stat'ed when a connection comes, and re-read every `pollMs` anyway; when their content
 * changed, the pair becomes the context of every new connection (`server.setSecureContext`);
 * connections already open keep theirs. A pair node:tls refuses (a key that does not match the
 * certificate: a writer between the two files) is not taken: the last good one stays, and the
 * refusal is logged once. The certificate's end of validity is logged at the start and at each
 * reload. Stops with the server.
 */
export function followServingCertificate(
  server: tls.Server,
  o: ServingCertificateFiles,
): { readonly loaded: boolean } {
  const read = () => ({ cert: fs.readFileSync(o.certFile), key: fs.readFileSync(o.keyFile) });
  const digest = (pair: { cert: Buffer; key: Buffer }) =>
    createHash("sha256").update(pair.cert).update("\0").update(pair.key).digest("hex");
  let served: string | undefined;
  let refused: string | undefined;
  try {
    if (o.startedEmpty) throw new Error("the server has no certificate yet");
    const pair = read();
    served = digest(pair);
    o.log?.({ msg: "serving certificate", certFile: o.certFile, ...certificateFacts(pair.cert) });
  } catch {
    /* checked again at the first tick */
  }
  const check = () => {
    let pair: { cert: Buffer; key: Buffer };
    try {
      pair = read();
    } catch {
      return; // a volume mid-update, or gone for now: keep serving the last good pair
    }
    const now = digest(pair);
    if (now === served || now === refused) return;
    try {
      server.setSecureContext({ ...o.options, ...pair });
    } catch (e) {
      refused = now;
      o.log?.({ msg: "serving certificate not reloaded", certFile: o.certFile, error: (e as Error).message });
      return;
    }
    served = now;
    refused = undefined;
    o.log?.({ msg: "serving certificate reloaded", certFile: o.certFile, ...certificateFacts(pair.cert) });
  };
  // A connection arriving right after a change may come before its watch event: before node:tls
  // gives the socket the current context, a stat of both files (cheap) says whether to look.
  const stamp = () => {
    try {
      return [o.certFile, o.keyFile]
        .map((f) => fs.statSync(f))
        .map((st) => `${st.ino}:${st.size}:${st.mtimeMs}`)
        .join(",");
    } catch {
      return "unreadable";
    }
  };
  let lastStamp = stamp();
  const onConnection = () => {
    const now = stamp();
    if (now === lastStamp) return;
    lastStamp = now;
    check();
  };
  server.prependListener("connection", onConnection);
  const timer = setInterval(check, o.pollMs ?? SERVING_CERTIFICATE_POLL_MS);
  timer.unref();
  const watchers = [...new Set([path.dirname(o.certFile), path.dirname(o.keyFile)])].flatMap((dir) => {
    try {
      const w = fs.watch(dir, { persistent: false }, () => setImmediate(check));
      w.on("error", () => w.close());
      return [w];
    } catch {
      return []; // no watch here: the poll alone
    }
  });
  server.once("close", () => {
    clearInterval(timer);
    for (const w of watchers) w.close();
  });
  return {
    get loaded() {
      return served !== undefined;
    },
  };
}

/** What a log line says of a certificate: its validity end and fingerprint (never the key). */
function certificateFacts(pem: Buffer): Record<string, string> {
  try {
    const cert = new X509Certificate(pem);
    return { notAfter: new Date(cert.validTo).toISOString(), fingerprint256: cert.fingerprint256 };
  } catch {
    return {};
  }
}
