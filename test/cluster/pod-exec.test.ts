/**
 * The exec client (pod-exec.ts) against a local `ws` server playing the apiserver's exec endpoint
 * over TLS with a bearer token: output frames on channels 1/2, the result Status on channel 3, a
 * non-zero exit returned as exitCode, refused upgrades and results without an exit code thrown with
 * the pod and the apiserver's message, a timeout, stdin with the v5 close signal. Then the real
 * kube-apiserver (test/env, no kubelet): its refusals (404, 400, 401, 403, 500) as the client reports
 * them. The whole path, apiserver → kubelet → runc, is tested in topolvm.test.ts.
 */
import * as fs from "node:fs";
import * as https from "node:https";
import type { IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import type { Duplex } from "node:stream";
import { WebSocketServer, type WebSocket } from "ws";
import { makeTls } from "../agent/tls-files";
import { type ControlPlane, startControlPlane } from "../env/cluster";
import { createUnrunPod } from "../env/kubelet-stand-in";
import { CHANNEL, execApiOf, type ExecApi, podExec } from "./pod-exec";

const TOKEN = "exec-test-token";
let server: https.Server;
let wss: WebSocketServer;
let api: ExecApi;
let dir: string;
/** The subprotocols the fake apiserver accepts, in its order of preference. */
let accepted = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
const seen: { url: string; protocol: string; frames: Buffer[] }[] = [];

const frame = (channel: number, data: string | Buffer = "") =>
  Buffer.concat([Buffer.from([channel]), Buffer.from(data)]);
const success = { metadata: {}, status: "Success" };
const exited = (code: number) => ({
  metadata: {},
  status: "Failure",
  message: `command terminated with non-zero exit code: exit status ${code}`,
  reason: "NonZeroExitCode",
  details: { causes: [{ reason: "ExitCode", message: String(code) }] },
});

function refuse(socket: Duplex, code: number, text: string, message: string): void {
  const body = JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", message, code });
  socket.end(
    `HTTP/1.1 ${code} ${text}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
}

/** What the fake "runs": the command's first word picks a script. */
function play(ws: WebSocket, argv: string[], frames: Buffer[]): void {
  const send = (channel: number, data?: string | Buffer | object) =>
    ws.send(frame(channel, typeof data === "object" && !Buffer.isBuffer(data) ? JSON.stringify(data) : data));
  // The apiserver opens each channel with an empty frame.
  for (const ch of [CHANNEL.stdout, CHANNEL.stderr, CHANNEL.status]) send(ch);
  const end = (status: object) => {
    send(CHANNEL.status, status);
    ws.close(1000);
  };
  switch (argv[0]) {
    case "both":
      send(CHANNEL.stdout, "out 1\n");
      send(CHANNEL.stderr, "err 1\n");
      send(CHANNEL.stdout, "out 2\n");
      return end(success);
    case "exit":
      send(CHANNEL.stderr, "failing\n");
      return end(exited(Number(argv[1])));
    case "nostart":
      return end({
        metadata: {},
        status: "Failure",
        reason: "InternalError",
        message: 'exec: "nostart": executable file not found in $PATH',
      });
    case "garbage":
      return end({ not: "a status" });
    case "hang":
      return;
    case "vanish":
      send(CHANNEL.stdout, "partial");
      return ws.close(1011, "backend gone");
    case "cat":
      ws.on("message", (d: Buffer) => {
        frames.push(d);
        if (d[0] === CHANNEL.stdin) send(CHANNEL.stdout, d.subarray(1));
        if (d[0] === CHANNEL.close && d[1] === CHANNEL.stdin) end(success);
      });
      return;
    default:
      return end(exited(127));
  }
}

beforeAll(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pod-exec-"));
  const tls = makeTls(dir);
  server = https.createServer({ cert: fs.readFileSync(tls.cert), key: fs.readFileSync(tls.key) });
  wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => accepted.find((p) => offered.has(p)) ?? false,
  });
  server.on("upgrade", (req: IncomingMessage, socket: Duplex, head: Buffer) => {
    const u = new URL(req.url ?? "", "https://x");
    const m = /^\/api\/v1\/namespaces\/([^/]+)\/pods\/([^/]+)\/exec$/.exec(u.pathname);
    if (req.headers.authorization !== `Bearer ${TOKEN}`)
      return refuse(socket, 401, "Unauthorized", "Unauthorized");
    if (!m || m[2] === "missing") return refuse(socket, 404, "Not Found", `pods "${m?.[2]}" not found`);
    if (u.searchParams.get("container") === "nope") {
      return refuse(socket, 400, "Bad Request", `container nope is not valid for pod ${m[2]}`);
    }
    wss.handleUpgrade(req, socket, head, (ws) => {
      const rec = { url: req.url ?? "", protocol: ws.protocol, frames: [] as Buffer[] };
      seen.push(rec);
      play(ws, u.searchParams.getAll("command"), rec.frames);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  api = {
    url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
    caPem: fs.readFileSync(tls.ca, "utf8"),
    token: TOKEN,
  };
});

afterAll(async () => {
  for (const c of wss.clients) c.terminate();
  await new Promise((r) => server.close(r));
  fs.rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  accepted = ["v5.channel.k8s.io", "v4.channel.k8s.io"];
  seen.length = 0;
});

test("stdout and stderr come back separated, Success is exit code 0, over v5 with every argv element as a command parameter", async () => {
  const r = await podExec(api, "ns-a", "pod-a", ["both", "a b", "--x=1"], { container: "main" });
  expect(r).toEqual({
    stdout: "out 1\nout 2\n",
    stderr: "err 1\n",
    exitCode: 0,
    protocol: "v5.channel.k8s.io",
  });
  const q = new URL(seen[0]!.url, "https://x").searchParams;
  expect(q.getAll("command")).toEqual(["both", "a b", "--x=1"]);
  expect(Object.fromEntries([...q].filter(([k]) => k !== "command"))).toEqual({
    stdout: "true",
    stderr: "true",
    container: "main",
  });
});

test("a non-zero exit is returned as exitCode from the Status's ExitCode cause, not thrown", async () => {
  await expect(podExec(api, "ns-a", "pod-a", ["exit", "3"])).resolves.toMatchObject({
    exitCode: 3,
    stdout: "",
    stderr: "failing\n",
  });
});

test("the v4 protocol, when the apiserver picks it, works the same without stdin", async () => {
  accepted = ["v4.channel.k8s.io"];
  await expect(podExec(api, "ns-a", "pod-a", ["exit", "42"])).resolves.toMatchObject({
    exitCode: 42,
    protocol: "v4.channel.k8s.io",
  });
});

test("stdin is sent on channel 0 and closed with the v5 close signal [255, 0]", async () => {
  const r = await podExec(api, "ns-a", "pod-a", ["cat"], { stdin: "line 1\nline 2\n" });
  expect(r).toMatchObject({ stdout: "line 1\nline 2\n", exitCode: 0 });
  expect(new URL(seen[0]!.url, "https://x").searchParams.get("stdin")).toBe("true");
  expect(seen[0]!.frames.at(-1)).toEqual(Buffer.from([255, 0]));
});

test("stdin under v4 (no close signal) is refused with the protocol named", async () => {
  accepted = ["v4.channel.k8s.io"];
  await expect(podExec(api, "ns-a", "pod-a", ["cat"], { stdin: "x" })).rejects.toThrow(
    'exec in pod ns-a/pod-a of ["cat"]: stdin needs v5.channel.k8s.io to be closed, the apiserver chose v4.channel.k8s.io',
  );
});

test("a refused upgrade names the namespace, pod, container and the apiserver's message", async () => {
  await expect(podExec(api, "ns-a", "missing", ["true"])).rejects.toThrow(
    'exec in pod ns-a/missing of ["true"]: the apiserver refused the upgrade: HTTP 404: pods "missing" not found',
  );
  await expect(podExec(api, "ns-a", "pod-a", ["true"], { container: "nope" })).rejects.toThrow(
    'exec in pod ns-a/pod-a, container nope of ["true"]: the apiserver refused the upgrade: HTTP 400: container nope is not valid for pod pod-a',
  );
  await expect(podExec({ ...api, token: "wrong" }, "ns-a", "pod-a", ["true"])).rejects.toThrow(
    "HTTP 401: Unauthorized",
  );
});

test("a Failure without an exit code (the command could not start) throws with the apiserver's message", async () => {
  await expect(podExec(api, "ns-a", "pod-a", ["nostart"])).rejects.toThrow(
    'exec in pod ns-a/pod-a of ["nostart"]: failed without an exit code: InternalError: exec: "nostart": executable file not found in $PATH',
  );
  await expect(podExec(api, "ns-a", "pod-a", ["garbage"])).rejects.toThrow("failed without an exit code");
});

test("a connection that closes without a Status throws with its close code and reason", async () => {
  await expect(podExec(api, "ns-a", "pod-a", ["vanish"])).rejects.toThrow(
    'exec in pod ns-a/pod-a of ["vanish"]: the connection closed (code 1011: backend gone) without a result',
  );
});

test("no result in time: the socket is closed and the error names the command", async () => {
  const t0 = Date.now();
  await expect(podExec(api, "ns-a", "pod-a", ["hang", "x"], { timeoutMs: 300 })).rejects.toThrow(
    'exec in pod ns-a/pod-a of ["hang","x"]: timed out after 300 ms without a result; socket closed',
  );
  expect(Date.now() - t0).toBeLessThan(3000);
  // The server sees the connection go.
  await new Promise((r) => setTimeout(r, 100));
  expect([...wss.clients].filter((c) => c.readyState === c.OPEN)).toEqual([]);
});

test("an empty command is refused before anything is sent", async () => {
  await expect(podExec(api, "ns-a", "pod-a", [])).rejects.toThrow("exec in ns-a/pod-a: empty command");
  expect(seen).toEqual([]);
});

describe("against the real kube-apiserver (no kubelet behind it)", () => {
  let cp: ControlPlane | undefined;
  let real: ExecApi;
  beforeAll(async () => {
    cp = await startControlPlane();
    real = execApiOf(cp);
    await cp.createNode("no-kubelet");
    await createUnrunPod(cp, "no-kubelet", "p");
  }, 120_000);
  afterAll(() => cp?.stop(), 60_000);

  const refused = "the apiserver refused the upgrade";
  test("a missing pod, an unknown container, a node it cannot reach: the apiserver's own messages", async () => {
    await expect(podExec(real, "default", "nope", ["id"])).rejects.toThrow(
      `exec in pod default/nope of ["id"]: ${refused}: HTTP 404: pods "nope" not found`,
    );
    await expect(podExec(real, "default", "p", ["id"], { container: "other" })).rejects.toThrow(
      `exec in pod default/p, container other of ["id"]: ${refused}: HTTP 400: container other is not valid for pod p`,
    );
    await expect(podExec(real, "default", "p", ["id"])).rejects.toThrow(
      `exec in pod default/p of ["id"]: ${refused}: HTTP 500: no preferred addresses found`,
    );
  });

  test("a bad token and an identity without pods/exec are refused (401, 403)", async () => {
    await expect(podExec({ ...real, token: "wrong" }, "default", "p", ["id"])).rejects.toThrow(
      `${refused}: HTTP 401: Unauthorized`,
    );
    await expect(
      podExec({ ...real, token: cp!.tokens.unprivileged }, "default", "p", ["id"]),
    ).rejects.toThrow(
      `${refused}: HTTP 403: pods "p" is forbidden: User "unprivileged" cannot get resource "pods/exec"`,
    );
  });
});
