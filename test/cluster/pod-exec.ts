/**
 * `kubectl exec` for the cluster tier's tests: a command in a pod's container through the apiserver
 * (apiserver → kubelet → containerd/runc), over the apiserver's WebSocket exec protocol.
 *
 *   const r = await podExec(api, "lvm-system", "pl-agent-x", ["sh", "-c", "exit 3"]);
 *   // r = { stdout: "", stderr: "", exitCode: 3, protocol: "v5.channel.k8s.io" }
 *
 * The protocol (k8s.io/apimachinery remotecommand, KEP-3396): a GET upgraded to a WebSocket with the
 * subprotocol v5.channel.k8s.io (v4.channel.k8s.io offered second); every binary message starts with
 * its channel: 0 stdin (to the pod), 1 stdout, 2 stderr, 3 the result as a metav1.Status (JSON),
 * 255 a close signal ([255, channel], v5 only: how stdin is closed). A non-zero exit is a Status
 * "Failure" with the cause {reason: "ExitCode", message: "<code>"}; it is returned, not thrown, so
 * tests assert on it. Everything else that fails (the upgrade refused, a Failure without an exit
 * code, no result in time) throws an error naming the pod, the container and the command.
 *
 * The WebSocket itself is the `ws` package (a devDependency: test-only, never in the product).
 */
import WebSocket from "ws";
import type { IncomingMessage } from "node:http";
import type { ControlPlane } from "../env/cluster";

/** How to reach the apiserver: as the control plane's request() does (its CA, a bearer token). */
export interface ExecApi {
  /** https://host:port */
  readonly url: string;
  /** PEM of the CA that signed the apiserver's serving certificate. */
  readonly caPem: string;
  readonly token: string;
}

/** The control plane's admin, as its own request() authenticates. */
export function execApiOf(cp: Pick<ControlPlane, "url" | "caPem" | "tokens">): ExecApi {
  return { url: cp.url, caPem: cp.caPem, token: cp.tokens.admin };
}

export interface ExecOptions {
  /** The container; the apiserver picks the pod's only container, or refuses when there are more. */
  readonly container?: string;
  /** Sent to the command's stdin, which is then closed (v5 close signal). */
  readonly stdin?: string | Buffer;
  /** Close the socket and throw after this long without a result. @default 60000 */
  readonly timeoutMs?: number;
}

export interface ExecResult {
  readonly stdout: string;
  readonly stderr: string;
  /** 0 on Status "Success", else the ExitCode cause of the Status "Failure". */
  readonly exitCode: number;
  /** The subprotocol the apiserver chose. */
  readonly protocol: string;
}

export const PROTOCOLS = ["v5.channel.k8s.io", "v4.channel.k8s.io"] as const;
export const CHANNEL = { stdin: 0, stdout: 1, stderr: 2, status: 3, close: 255 } as const;

/** The exec path with its query: one `command` parameter per argv element, as kubectl sends. */
export function execPath(
  namespace: string,
  pod: string,
  argv: readonly string[],
  o: { container?: string; stdin?: boolean } = {},
): string {
  const q = new URLSearchParams();
  for (const a of argv) q.append("command", a);
  q.set("stdout", "true");
  q.set("stderr", "true");
  if (o.stdin) q.set("stdin", "true");
  if (o.container) q.set("container", o.container);
  return `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods/${encodeURIComponent(pod)}/exec?${q}`;
}

interface Status {
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { causes?: { reason?: string; message?: string }[] };
}

/**
 * The exit code a channel-3 Status reports, or an Error when it reports no exit (the command could
 * not start, the container is gone, ...). `what` names the exec for the message.
 */
export function exitCodeOf(status: Status, what: string): number | Error {
  if (status.status === "Success") return 0;
  const cause = status.details?.causes?.find((c) => c.reason === "ExitCode");
  const code = Number(cause?.message);
  if (status.status === "Failure" && cause && Number.isInteger(code)) return code;
  return new Error(
    `${what}: failed without an exit code: ${status.reason ?? "?"}: ${status.message ?? JSON.stringify(status)}`,
  );
}

/** Runs `argv` in the pod (no TTY) and resolves with its output and exit code. */
export function podExec(
  api: ExecApi,
  namespace: string,
  pod: string,
  argv: readonly string[],
  o: ExecOptions = {},
): Promise<ExecResult> {
  if (argv.length === 0) return Promise.reject(new Error(`exec in ${namespace}/${pod}: empty command`));
  const container = o.container ? `, container ${o.container}` : "";
  const what = `exec in pod ${namespace}/${pod}${container} of ${JSON.stringify(argv)}`;
  const timeoutMs = o.timeoutMs ?? 60_000;
  const url = `${api.url.replace(/^http/, "ws")}${execPath(namespace, pod, argv, {
    container: o.container,
    stdin: o.stdin !== undefined,
  })}`;

  return new Promise<ExecResult>((resolve, reject) => {
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    let status: Status | undefined;
    let settled = false;
    const finish = (e: Error | undefined, r?: ExecResult) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      if (e) {
        ws.terminate();
        reject(e);
      } else resolve(r!);
    };
    const ws = new WebSocket(url, [...PROTOCOLS], {
      ca: api.caPem,
      headers: { authorization: `Bearer ${api.token}` },
      perMessageDeflate: false,
    });
    const timer = setTimeout(
      () => finish(new Error(`${what}: timed out after ${timeoutMs} ms without a result; socket closed`)),
      timeoutMs,
    );

    ws.on("unexpected-response", (_req, res: IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        let message = text.trim();
        try {
          message = (JSON.parse(text) as Status).message ?? message;
        } catch {
          /* not a Status: keep the text */
        }
        finish(new Error(`${what}: the apiserver refused the upgrade: HTTP ${res.statusCode}: ${message}`));
      });
      res.on("error", (e) => finish(new Error(`${what}: reading the refusal: ${e.message}`)));
    });
    ws.on("error", (e) => finish(new Error(`${what}: ${e.message}`)));

    ws.on("open", () => {
      if (o.stdin === undefined) return;
      if (ws.protocol !== PROTOCOLS[0]) {
        finish(
          new Error(`${what}: stdin needs ${PROTOCOLS[0]} to be closed, the apiserver chose ${ws.protocol}`),
        );
        return;
      }
      const data = Buffer.isBuffer(o.stdin) ? o.stdin : Buffer.from(o.stdin);
      ws.send(Buffer.concat([Buffer.from([CHANNEL.stdin]), data]));
      ws.send(Buffer.from([CHANNEL.close, CHANNEL.stdin]));
    });

    ws.on("message", (data: Buffer, isBinary: boolean) => {
      if (!isBinary || data.length === 0) return;
      const body = data.subarray(1);
      switch (data[0]) {
        case CHANNEL.stdout:
          out.push(body);
          break;
        case CHANNEL.stderr:
          err.push(body);
          break;
        case CHANNEL.status:
          // An empty frame opens the channel; the Status comes once, when the command ended.
          if (body.length === 0) break;
          try {
            status = JSON.parse(body.toString("utf8")) as Status;
          } catch {
            finish(new Error(`${what}: a result that is not a Status: ${body.toString("utf8")}`));
          }
          break;
        default:
        // 255: the server closed one of its channels; nothing to do.
      }
    });

    ws.on("close", (code, reason) => {
      if (!status) {
        const why = reason.length ? `: ${reason.toString("utf8")}` : "";
        finish(new Error(`${what}: the connection closed (code ${code}${why}) without a result`));
        return;
      }
      const exit = exitCodeOf(status, what);
      if (exit instanceof Error) finish(exit);
      else
        finish(undefined, {
          stdout: Buffer.concat(out).toString("utf8"),
          stderr: Buffer.concat(err).toString("utf8"),
          exitCode: exit,
          protocol: ws.protocol,
        });
    });
  });
}
