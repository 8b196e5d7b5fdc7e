import * as fs from "node:fs";
import type * as http from "node:http";
import * as https from "node:https";
import * as path from "node:path";
import type { Clock } from "../../kube/clock";
import { followServingCertificate } from "../../kube/serving-certificate";
import { WEBHOOK_PATHS } from "../../agent-api/admission";
import { reviewApproval } from "./approvals";
import { Limiter, OverloadedError } from "./limiter";
import { review, type AdmissionReads, type AdmissionRequest, type AdmissionVerdict } from "./review";

/**
 * An AdmissionReview holds an object and, on an update, the stored one: at most twice etcd's
 * 1.5 MB object limit, with room for the envelope; anything larger is not one.
 */
const MAX_BODY_BYTES = 3 * 1024 * 1024;

export interface WebhookServerOptions {
  /** A directory with tls.crt and tls.key (a kubernetes.io/tls Secret's volume); re-read when they change. */
  readonly certDir: string;
  /** The files may appear later (the operator issues them): start without, serve once they come. */
  readonly awaitCertificate?: boolean;
  readonly reads: AdmissionReads;
  readonly clock: Clock;
  readonly log: (entry: Record<string, unknown>) => void;
  /** Told about each review: its kind, verdict and duration. */
  readonly onReview?: (kind: string, allowed: boolean | "error", seconds: number) => void;
  /** Reviews worked on at once; the rest wait in line. @default 4 */
  readonly concurrency?: number;
  /** Reviews waiting at most; one more is refused at once. @default 256 */
  readonly queueLimit?: number;
  /** Bytes of request bodies held at once, all connections together; past it a request is refused. @default 64 MiB */
  readonly bodyBudgetBytes?: number;
  /** The whole request (headers and body) must arrive within this. @default 10000 */
  readonly requestTimeoutMs?: number;
}

/**
 * The admission webhook (docs/operator.md, Admission): HTTPS only, POST of an admission.k8s.io/v1
 * AdmissionReview to WEBHOOK_PATHS, answered with the same uid. The serving certificate is read from
 * `certDir` and followed: a rotated Secret is served to new connections with no restart.
 * Every replica serves it, leader or not: it only reads.
 *
 * Anyone who reaches its port can send it a review (the API server presents no client certificate
 * unless its admission configuration says so), so a review's userInfo is only what its sender
 * claims, and what a request costs is bounded: a body of at most MAX_BODY_BYTES, within
 * `requestTimeoutMs`, all bodies together within `bodyBudgetBytes` (else 413, 408 or 503, the
 * connection closed); anything but an admission.k8s.io/v1 AdmissionReview with a request uid is
 * 400 and changes nothing. Reviews read caches (reads.ts) and run `concurrency` at a time; the
 * rest wait first come, first served until the API server's own deadline for the call (its
 * `?timeout=`) is near, and are then refused with a message saying the webhook is overloaded —
 * with failurePolicy Fail a review not answered in time is refused anyway, and this way a
 * legitimate review queued behind a flood is still answered: each takes milliseconds.
 */
export function createWebhookServer(
  o: WebhookServerOptions,
): https.Server & { readonly certificateLoaded: boolean } {
  const certFile = path.join(o.certDir, "tls.crt");
  const keyFile = path.join(o.certDir, "tls.key");
  const limiter = new Limiter({
    clock: o.clock,
    concurrency: o.concurrency ?? 4,
    queueLimit: o.queueLimit ?? 256,
  });
  const budget = o.bodyBudgetBytes ?? 64 * 1024 * 1024;
  let held = 0;
  const timeoutMs = o.requestTimeoutMs ?? 10_000;
  // A missing or unreadable certificate fails the start, naming the file, unless it is awaited
  // (the operator issues it: until its Secret reaches the volume, handshakes fail and the replica
  // is not ready); later changes are followed.
  const pending = o.awaitCertificate && !(fs.existsSync(certFile) && fs.existsSync(keyFile));
  const server = https.createServer({
    ...(pending ? {} : { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) }),
    requestTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    connectionsCheckingInterval: Math.min(1000, timeoutMs),
  });
  const followed = followServingCertificate(server, {
    certFile,
    keyFile,
    log: o.log,
    ...(pending ? { startedEmpty: true } : {}),
  });
  Object.defineProperty(server, "certificateLoaded", { get: () => followed.loaded });
  server.on("request", (req, res) => {
    const send = (status: number, body: unknown) => {
      if (res.headersSent) return;
      const text = JSON.stringify(body);
      res.writeHead(status, {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(text),
      });
      res.end(text);
    };
    const route = (req.url ?? "/").split("?")[0];
    if (
      route !== WEBHOOK_PATHS.nodeSets &&
      route !== WEBHOOK_PATHS.lvmNodes &&
      route !== WEBHOOK_PATHS.approvals
    )
      return send(404, { message: "not found" });
    if (req.method !== "POST") return send(405, { message: "method not allowed" });
    if (!/^application\/json\b/i.test(req.headers["content-type"] ?? ""))
      return void (send(415, { message: "an AdmissionReview is sent as application/json" }), req.resume());
    // A refused body is read and dropped (never held), until it ends or the request times out.
    const declared = Number(req.headers["content-length"] ?? 0);
    if (declared > MAX_BODY_BYTES) return void (tooLarge(send), req.resume());
    const chunks: Buffer[] = [];
    let size = 0;
    let refused = false;
    const release = () => {
      held -= size;
      size = 0;
    };
    req.on("close", release);
    req.on("data", (c: Buffer) => {
      if (refused) return;
      const tooBig = size + c.length > MAX_BODY_BYTES;
      if (tooBig || held + c.length > budget) {
        refused = true;
        release();
        chunks.length = 0;
        if (tooBig) tooLarge(send);
        else send(503, { message: "the webhook holds too many request bodies at once; try again" });
        return;
      }
      size += c.length;
      held += c.length;
      chunks.push(c);
    });
    req.on("end", () => {
      if (refused) return;
      const body = Buffer.concat(chunks);
      release();
      chunks.length = 0;
      const t0 = o.clock.monotonic();
      const parsed = admissionRequest(body);
      if (typeof parsed === "string") return send(400, { message: `not an AdmissionReview: ${parsed}` });
      const request = parsed;
      const answer = (verdict: AdmissionVerdict, outcome: boolean | "error") => {
        const seconds = (o.clock.monotonic() - t0) / 1000;
        o.onReview?.(request.kind.kind, outcome, seconds);
        if (!verdict.allowed) o.log(refusalEntry(request, verdict, seconds));
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
      limiter
        .run(waitMs(req), () =>
          route === WEBHOOK_PATHS.approvals
            ? reviewApproval(request, (u, ns, n) => o.reads.canApprove(u, ns, n))
            : review(request, o.reads),
        )
        .then(
          (verdict) => answer(verdict, verdict.allowed),
          (e: unknown) =>
            answer(
              e instanceof OverloadedError
                ? {
                    allowed: false,
                    code: 429,
                    message: `the pulumi-lvm operator's webhook is overloaded (${e.message}); try again`,
                  }
                : {
                    // The cluster could not be read: refuse (failurePolicy Fail would refuse a silent webhook too).
                    allowed: false,
                    code: 500,
                    message: `the pulumi-lvm operator could not check this object: ${(e as Error).message}`,
                  },
              "error",
            ),
        );
    });
  });
  return server as https.Server & { readonly certificateLoaded: boolean };
}

function tooLarge(send: (status: number, body: unknown) => void): void {
  send(413, { message: `an AdmissionReview is at most ${MAX_BODY_BYTES} bytes` });
}

/**
 * How long a review may wait for its turn: the API server's deadline for this call (it adds
 * `?timeout=10s`, the configuration's timeoutSeconds) less a second for the answer to travel; 4 s
 * when it says none. At most 29 s, at least 0.
 */
function waitMs(req: http.IncomingMessage): number {
  const m = /[?&]timeout=(\d+)s(?:&|$)/.exec(req.url ?? "");
  const seconds = m ? Math.min(Number(m[1]), 30) : 5;
  return Math.max(0, seconds * 1000 - 1000);
}

/** The AdmissionRequest of an admission.k8s.io/v1 AdmissionReview, or what is wrong with the body. */
function admissionRequest(body: Buffer): AdmissionRequest | string {
  let review: unknown;
  try {
    review = JSON.parse(body.toString("utf8"));
  } catch (e) {
    return `the body is not JSON (${(e as Error).message})`;
  }
  if (typeof review !== "object" || review === null || Array.isArray(review))
    return "the body is not an object";
  const r = review as { apiVersion?: unknown; kind?: unknown; request?: unknown };
  if (r.apiVersion !== "admission.k8s.io/v1" || r.kind !== "AdmissionReview")
    return `apiVersion ${JSON.stringify(r.apiVersion)} kind ${JSON.stringify(r.kind)}: only admission.k8s.io/v1 AdmissionReview is served`;
  const request = r.request as Partial<AdmissionRequest> | undefined;
  if (typeof request !== "object" || request === null) return "no request";
  if (typeof request.uid !== "string" || request.uid === "" || request.uid.length > 128)
    return "request.uid is not a string of 1 to 128 characters";
  if (typeof request.kind?.kind !== "string") return "request.kind.kind is not a string";
  if (!["CREATE", "UPDATE", "DELETE", "CONNECT"].includes(request.operation as string))
    return `request.operation ${JSON.stringify(request.operation)} is not CREATE, UPDATE, DELETE or CONNECT`;
  return request as AdmissionRequest;
}

/**
 * The log entry of a refusal. The username is what the review claims (anyone reaching the port can
 * write any), so it is logged as `claimedUser`, never as the requester; names and reasons are cut.
 */
function refusalEntry(
  request: AdmissionRequest,
  verdict: AdmissionVerdict & { allowed: false },
  seconds: number,
) {
  const claimed = request.userInfo?.username;
  return {
    msg: "admission refused",
    kind: cut(request.kind.kind, 64),
    operation: request.operation,
    object: cut(`${request.namespace ?? ""}/${request.name ?? ""}`, 320),
    ...(typeof claimed === "string" ? { claimedUser: cut(claimed, 256) } : {}),
    code: verdict.code,
    reason: cut(verdict.message, 4096),
    seconds,
  };
}

function cut(text: unknown, max: number): string {
  const s = typeof text === "string" ? text : (JSON.stringify(text) ?? "");
  return s.length > max ? `${s.slice(0, max)}… (${s.length} characters)` : s;
}
