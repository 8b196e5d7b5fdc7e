import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import * as tls from "node:tls";
import type { Clock } from "../../kube/clock";
import { WEBHOOK_PATHS } from "../../agent-api/admission";
import { review, type AdmissionReads, type AdmissionRequest, type AdmissionVerdict } from "./review";

/** An AdmissionReview is small; anything larger is not one. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface WebhookServerOptions {
  /** A directory with tls.crt and tls.key (a kubernetes.io/tls Secret's volume); re-read when they change. */
  readonly certDir: string;
  readonly reads: AdmissionReads;
  readonly clock: Clock;
  readonly log: (entry: Record<string, unknown>) => void;
  /** Told about each review: its kind, verdict and duration. */
  readonly onReview?: (kind: string, allowed: boolean | "error", seconds: number) => void;
}

/**
 * The admission webhook (docs/operator.md, Admission): HTTPS only, POST of an admission.k8s.io/v1
 * AdmissionReview to WEBHOOK_PATHS, answered with the same uid. The serving certificate is read from
 * `certDir` at each new TLS connection when its files changed (a rotated Secret needs no restart).
 * Every replica serves it, leader or not: it only reads.
 */
export function createWebhookServer(o: WebhookServerOptions): https.Server {
  const context = reloadingContext(o.certDir);
  const server = https.createServer({ SNICallback: (_name, cb) => cb(null, context()), ...context.initial });
  server.on("request", (req, res) => {
    const send = (status: number, body: unknown) => {
      const text = JSON.stringify(body);
      res.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    };
    const route = (req.url ?? "/").split("?")[0];
    if (route !== WEBHOOK_PATHS.nodeSets && route !== WEBHOOK_PATHS.lvmNodes)
      return send(404, { message: "not found" });
    if (req.method !== "POST") return send(405, { message: "method not allowed" });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (c: Buffer) => {
      size += c.length;
      if (size > MAX_BODY_BYTES) req.destroy();
      else chunks.push(c);
    });
    req.on("end", () => {
      const t0 = o.clock.now();
      let request: AdmissionRequest;
      try {
        request = (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { request: AdmissionRequest })
          .request;
        if (!request || typeof request.uid !== "string") throw new Error("no request.uid");
      } catch (e) {
        return send(400, { message: `not an AdmissionReview: ${(e as Error).message}` });
      }
      const answer = (verdict: AdmissionVerdict, outcome: boolean | "error") => {
        const seconds = (o.clock.now() - t0) / 1000;
        o.onReview?.(request.kind?.kind ?? "", outcome, seconds);
        if (!verdict.allowed)
          o.log({
            msg: "admission refused",
            kind: request.kind?.kind,
            object: `${request.namespace ?? ""}/${request.name ?? ""}`,
            user: request.userInfo?.username,
            reason: verdict.message,
            seconds,
          });
        send(200, {
          apiVersion: "admission.k8s.io/v1",
          kind: "AdmissionReview",
          response: {
            uid: request.uid,
            allowed: verdict.allowed,
            ...(verdict.allowed ? {} : { status: { code: verdict.code, message: verdict.message } }),
          },
        });
      };
      review(request, o.reads).then(
        (verdict) => answer(verdict, verdict.allowed),
        // The cluster could not be read: refuse (failurePolicy Fail would refuse a silent webhook too).
        (e: unknown) =>
          answer(
            {
              allowed: false,
              code: 500,
              message: `the pulumi-lvm operator could not check this object: ${(e as Error).message}`,
            },
            "error",
          ),
      );
    });
  });
  return server;
}

/** A TLS context from certDir's tls.crt and tls.key, rebuilt when either file changed. */
function reloadingContext(
  certDir: string,
): (() => tls.SecureContext) & { initial: tls.SecureContextOptions } {
  const files = [path.join(certDir, "tls.crt"), path.join(certDir, "tls.key")] as const;
  const read = () => ({ cert: fs.readFileSync(files[0]), key: fs.readFileSync(files[1]) });
  const stamp = () => files.map((f) => `${fs.statSync(f).mtimeMs}:${fs.statSync(f).ino}`).join(",");
  const initial = read(); // a missing or unreadable certificate fails the start, naming the file
  let seen = stamp();
  let context = tls.createSecureContext(initial);
  const current = () => {
    try {
      const now = stamp();
      if (now !== seen) {
        context = tls.createSecureContext(read());
        seen = now;
      }
    } catch {
      /* a Secret volume mid-update: keep the last good certificate */
    }
    return context;
  };
  return Object.assign(current, { initial });
}
