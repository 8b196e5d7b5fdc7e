/**
 * A real, local Kubernetes control plane for integration tests: etcd + kube-apiserver (and,
 * on request, kube-controller-manager) built from source by test/env/install.sh, started on
 * 127.0.0.1 with random free ports and a temporary data directory.
 *
 *   const cp = await startControlPlane();          // in beforeAll, with a generous timeout
 *   afterAll(() => cp?.stop());                     // ALWAYS: stop() kills the processes
 *   const r = await cp.request("GET", "/api/v1/nodes");
 *
 * Tests must call stop() in afterAll. As a safety net, every child is also killed when the
 * Node process exits (an "exit" handler) or dies (the children are started under
 * `setpriv --pdeathsig SIGKILL`, so the kernel kills them even if Node is SIGKILLed).
 *
 * The binaries are never silently missing: startControlPlane() (and requireBinaries()) throw
 * an error that says to run test/env/install.sh.
 */
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as https from "node:https";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { freePort, freePorts } from "../net";

/* ------------------------------------------------------------------------- binaries ---- */

/** The repository root: the nearest ancestor with test/env/k8s/go.mod (works from dist/ too). */
function findRepoRoot(): string {
  for (let dir = __dirname; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, "test", "env", "k8s", "go.mod"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no test/env/k8s/go.mod above ${__dirname}`);
  }
}
const REPO_ROOT = findRepoRoot();
const ENV_DIR = path.join(REPO_ROOT, "test", "env");
export const INSTALL_SCRIPT = path.join(ENV_DIR, "install.sh");
export const BINARIES = ["etcd", "kube-apiserver", "kube-controller-manager"] as const;
export type BinaryName = (typeof BINARIES)[number];

/** The k8s.io/kubernetes version pinned in test/env/k8s/go.mod (the cache is keyed by it). */
export function kubernetesVersion(): string {
  const goMod = fs.readFileSync(path.join(ENV_DIR, "k8s", "go.mod"), "utf8");
  const m = /^\s*(?:require\s+)?k8s\.io\/kubernetes\s+(v\S+)/m.exec(goMod);
  if (!m?.[1])
    throw new Error(`cannot find the k8s.io/kubernetes version in ${path.join(ENV_DIR, "k8s", "go.mod")}`);
  return m[1];
}

/**
 * Where install.sh puts the binaries: $PULUMI_LVM_K8S_BIN if set, else
 * ${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}/k8s/<version>/bin.
 */
export function binDir(): string {
  if (process.env.PULUMI_LVM_K8S_BIN) return process.env.PULUMI_LVM_K8S_BIN;
  const cache = process.env.PULUMI_LVM_CACHE || path.join(os.homedir(), ".cache", "pulumi-lvm");
  return path.join(cache, "k8s", kubernetesVersion(), "bin");
}

function isExecutable(file: string): boolean {
  try {
    fs.accessSync(file, fs.constants.X_OK);
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** The binaries that are not installed (empty when everything is there). */
export function missingBinaries(dir = binDir()): BinaryName[] {
  return BINARIES.filter((b) => !isExecutable(path.join(dir, b)));
}

/** True when etcd, kube-apiserver and kube-controller-manager are installed. */
export function binariesAvailable(dir = binDir()): boolean {
  return missingBinaries(dir).length === 0;
}

/** Throws a loud, explicit error when any binary is missing. Never skip a test instead. */
export function requireBinaries(dir = binDir()): void {
  const missing = missingBinaries(dir);
  if (missing.length === 0) return;
  const rel = path.relative(process.cwd(), INSTALL_SCRIPT) || INSTALL_SCRIPT;
  throw new Error(
    [
      "",
      "==================================================================================",
      `Kubernetes control-plane binaries are missing: ${missing.join(", ")}`,
      `  looked in: ${dir}`,
      `  run:       bash ${rel}`,
      "  (builds kube-apiserver, kube-controller-manager and etcd from source with Go;",
      "   about 10-15 minutes cold, instant once cached)",
      "==================================================================================",
    ].join("\n"),
  );
}

/* -------------------------------------------------------------------------- public API ---- */

export interface ControlPlaneOptions {
  /** Also run kube-controller-manager (garbage collection of owned objects, namespace deletion, ...). */
  readonly controllerManager?: boolean;
  /** Controllers for kube-controller-manager. @default garbagecollector,namespace,serviceaccount,serviceaccount-token */
  readonly controllers?: string[];
  /** Namespace of the operator's and agent's service-account-like identities. @default "pulumi-lvm-system" */
  readonly namespace?: string;
  /** Where the binaries are. @default binDir() */
  readonly binDir?: string;
  /**
   * Another etcd to use, e.g. Debian's /usr/bin/etcd (3.4, which works but lacks
   * RequestWatchProgress). @default $PULUMI_LVM_ETCD, else <binDir>/etcd (built by install.sh)
   */
  readonly etcdBinary?: string;
  /** Parent of the temporary data directory. @default os.tmpdir() */
  readonly tmpDir?: string;
  /** Give up waiting for readiness after this long. @default 90000 */
  readonly startTimeoutMs?: number;
  /** Extra kube-apiserver flags ("--name=value"). */
  readonly apiserverFlags?: string[];
  /** Keep the data directory (logs, certs) after stop(), for debugging. @default false */
  readonly keepDataDir?: boolean;
  /** Extra environment of kube-apiserver (e.g. HTTPS_PROXY to reach kubelets). @default {} */
  readonly apiserverEnv?: Readonly<Record<string, string>>;
  /**
   * Give kube-apiserver a client certificate for kubelets (CN kube-apiserver-kubelet-client,
   * O system:masters, signed by the cluster CA), so logs and exec reach real kubelets. @default false
   */
  readonly kubeletClientCert?: boolean;
  /** Also run kube-scheduler (built on request: `bash test/env/install.sh kube-scheduler`). @default false */
  readonly scheduler?: boolean;
}

export type ComponentName = "etcd" | "kube-apiserver" | "kube-controller-manager" | "kube-scheduler";

export type IdentityName = "admin" | "operator" | "agent" | "unprivileged";

export interface Identity {
  token: string;
  username: string;
  uid: string;
  groups: string[];
}

/**
 * Kubernetes JSON as tests read it: objects from the apiserver are plain JSON whose shape the
 * tests' assertions check, so property paths are not type-checked here.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Json = any;

export interface Response<T = Json> {
  status: number;
  body: T;
  headers: http.IncomingHttpHeaders;
}

export interface RequestOptions {
  /** Content type of the body. @default "application/json" (PATCH: "application/merge-patch+json") */
  contentType?: string;
  /** Per-request timeout. @default 30000 */
  timeoutMs?: number;
  /**
   * A connection of its own instead of a pooled keep-alive one: for callers that block the event
   * loop between requests (spawnSync of a long command), when the apiserver has meanwhile closed
   * the idle pooled socket and reusing it fails with EPIPE or "socket hang up". @default false
   */
  newConnection?: boolean;
}

export interface ControlPlane {
  /** https://127.0.0.1:<port> */
  url: string;
  /** PEM of the CA that signed the serving certificate. */
  caPem: string;
  /** A kubeconfig for the admin identity (system:masters). */
  kubeconfigPath: string;
  /** The directory of the binaries it runs. */
  binDir: string;
  /** The temporary directory: certs, etcd data, *.log. Removed by stop(). */
  dataDir: string;
  /** Static bearer tokens of the test identities. */
  tokens: Record<IdentityName, string>;
  /** The full test identities (username, groups) behind the tokens. */
  identities: Record<IdentityName, Identity>;
  /** Milliseconds from start to etcd healthy, apiserver /readyz, and (if started) controller-manager healthy. */
  timings: {
    etcdMs: number;
    apiserverMs: number;
    controllerManagerMs?: number;
    schedulerMs?: number;
    totalMs: number;
  };
  /** A request to the apiserver; `token` defaults to the admin's. The body is parsed as JSON when it is. */
  request<T = Json>(
    method: string,
    urlPath: string,
    body?: unknown,
    token?: string,
    opts?: RequestOptions,
  ): Promise<Response<T>>;
  /** Creates a Node object (no kubelet behind it) with the given labels and returns it. */
  createNode(name: string, labels?: Record<string, string>): Promise<Json>;
  /** Writes a kubeconfig for one of the identities and returns its path. */
  kubeconfigFor(identity: IdentityName): string;
  /** The tail of a component's log file. */
  logTail(component: ComponentName, lines?: number): string;
  /** Kills every process (process groups) and removes the data directory. Idempotent. */
  stop(): Promise<void>;
}

/* ---------------------------------------------------------------------------- helpers ---- */

function openssl(args: string[], cwd: string): void {
  try {
    execFileSync("openssl", args, { cwd, stdio: ["ignore", "pipe", "pipe"] });
  } catch (e) {
    const err = e as Error & { stderr?: Buffer };
    throw new Error(`openssl ${args.join(" ")} failed: ${err.stderr?.toString() ?? err.message}`);
  }
}

function tail(file: string, lines = 40): string {
  try {
    const text = fs.readFileSync(file, "utf8");
    return text
      .split("\n")
      .slice(-lines - 1)
      .join("\n");
  } catch {
    return `(no log at ${file})`;
  }
}

/** The error lines of a klog/zap log (E/F severity, panics), which a plain tail often misses. */
function errorLines(file: string, lines = 15): string {
  try {
    const text = fs.readFileSync(file, "utf8");
    return text
      .split("\n")
      .filter((l) => /^[EF]\d{4} |"level":"(error|fatal|panic)"|panic:|fatal error:/.test(l))
      .slice(-lines)
      .join("\n");
  } catch {
    return "";
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Certificates and keys: a CA, the apiserver's serving cert, service-account signing keys. */
function makePki(dir: string): void {
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(
    [
      "req",
      "-x509",
      ...ec,
      "-keyout",
      "ca.key",
      "-out",
      "ca.crt",
      "-days",
      "2",
      "-subj",
      "/CN=pulumi-lvm-test-ca",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign,cRLSign",
    ],
    dir,
  );
  fs.writeFileSync(
    path.join(dir, "serving.ext"),
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      "subjectAltName=IP:127.0.0.1,IP:10.0.0.1,DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local",
      "",
    ].join("\n"),
  );
  openssl(
    ["req", ...ec, "-keyout", "apiserver.key", "-out", "apiserver.csr", "-subj", "/CN=kube-apiserver"],
    dir,
  );
  openssl(
    [
      "x509",
      "-req",
      "-in",
      "apiserver.csr",
      "-CA",
      "ca.crt",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-out",
      "apiserver.crt",
      "-days",
      "2",
      "-extfile",
      "serving.ext",
    ],
    dir,
  );
  openssl(["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-out", "sa.key"], dir);
  openssl(["pkey", "-in", "sa.key", "-pubout", "-out", "sa.pub"], dir);
}

/**
 * A client certificate signed by the CA in `dir` (ca.crt, ca.key), written as <name>.crt/<name>.key;
 * Kubernetes takes CN as the user name and each O as a group.
 */
export function signClientCert(dir: string, name: string, cn: string, groups: readonly string[] = []): void {
  const subj = `${groups.map((g) => `/O=${g}`).join("")}/CN=${cn}`;
  const ext = path.join(dir, `${name}.ext`);
  fs.writeFileSync(
    ext,
    "basicConstraints=critical,CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=clientAuth\n",
  );
  const ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
  openssl(["req", ...ec, "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subj], dir);
  openssl(
    [
      ...["x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial"],
      ...["-out", `${name}.crt`, "-days", "2", "-extfile", ext],
    ],
    dir,
  );
}

function kubeconfigYaml(url: string, caPem: string, user: string, token: string): string {
  const ca = Buffer.from(caPem).toString("base64");
  return [
    "apiVersion: v1",
    "kind: Config",
    "clusters:",
    "- name: test",
    "  cluster:",
    `    server: ${url}`,
    `    certificate-authority-data: ${ca}`,
    "users:",
    `- name: ${user}`,
    "  user:",
    `    token: ${token}`,
    "contexts:",
    "- name: test",
    "  context:",
    "    cluster: test",
    `    user: ${user}`,
    "current-context: test",
    "",
  ].join("\n");
}

/* ----------------------------------------------------------------- process bookkeeping ---- */

const live = new Set<ChildProcess>();
/** Data directories of control planes not yet stopped (removed by the exit hook). */
const liveDirs = new Set<string>();
let exitHookInstalled = false;

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    /* already gone */
  }
}

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort (stop() not called, e.g. a crashed test file): kill synchronously on exit.
  process.on("exit", () => {
    for (const child of live) killGroup(child, "SIGKILL");
    for (const dir of liveDirs) fs.rmSync(dir, { recursive: true, force: true });
  });
}

const DATA_DIR_PREFIX = "pulumi-lvm-k8s-";

/** Removes data directories left by test processes that died without stop() (e.g. SIGKILL). */
function removeStaleDataDirs(parent: string): void {
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(parent).filter((e) => e.startsWith(DATA_DIR_PREFIX));
  } catch {
    return;
  }
  for (const e of entries) {
    const dir = path.join(parent, e);
    try {
      const owner = Number(fs.readFileSync(path.join(dir, "owner.pid"), "utf8"));
      if (!Number.isInteger(owner) || owner <= 0) continue;
      try {
        process.kill(owner, 0);
        continue; // its owner is alive
      } catch {
        fs.rmSync(dir, { recursive: true, force: true });
      }
    } catch {
      /* no owner.pid (not ours, or being created): leave it */
    }
  }
}

const PDEATHSIG = fs.existsSync("/usr/bin/setpriv") ? "/usr/bin/setpriv" : undefined;

function startProcess(
  binary: string,
  args: string[],
  logFile: string,
  env?: Readonly<Record<string, string>>,
): ChildProcess {
  const out = fs.openSync(logFile, "a");
  fs.writeSync(out, `# ${binary} ${args.join(" ")}\n`);
  const [cmd, argv] = PDEATHSIG
    ? [PDEATHSIG, ["--pdeathsig", "SIGKILL", "--", binary, ...args]]
    : [binary, args];
  const child = spawn(cmd, argv, {
    detached: true,
    stdio: ["ignore", out, out],
    ...(env ? { env: { ...process.env, ...env } } : {}),
  });
  fs.closeSync(out);
  live.add(child);
  child.on("exit", () => live.delete(child));
  return child;
}

async function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return true;
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/* -------------------------------------------------------------------------- the start ---- */

function httpGet(url: string, opts: https.RequestOptions = {}): Promise<number> {
  return new Promise((resolve) => {
    const mod = url.startsWith("https:") ? https : http;
    const req = mod.get(url, { ...opts, timeout: 2000 }, (res) => {
      res.resume();
      res.on("end", () => resolve(res.statusCode ?? 0));
    });
    req.on("timeout", () => req.destroy());
    req.on("error", () => resolve(0));
  });
}

export async function startControlPlane(opts: ControlPlaneOptions = {}): Promise<ControlPlane> {
  const t0 = Date.now();
  const bin = opts.binDir ?? binDir();
  requireBinaries(bin);
  installExitHook();

  const parent = opts.tmpDir ?? os.tmpdir();
  removeStaleDataDirs(parent);
  const dataDir = fs.mkdtempSync(path.join(parent, DATA_DIR_PREFIX));
  fs.writeFileSync(path.join(dataDir, "owner.pid"), String(process.pid));
  if (!opts.keepDataDir) liveDirs.add(dataDir);
  const children: ChildProcess[] = [];
  const logs = {
    etcd: path.join(dataDir, "etcd.log"),
    "kube-apiserver": path.join(dataDir, "kube-apiserver.log"),
    "kube-controller-manager": path.join(dataDir, "kube-controller-manager.log"),
    "kube-scheduler": path.join(dataDir, "kube-scheduler.log"),
  };
  let stopped = false;

  const stop = async (): Promise<void> => {
    if (stopped) return;
    stopped = true;
    // Controller-manager first, then the apiserver, then etcd: nothing logs spurious errors.
    for (const child of [...children].reverse()) {
      killGroup(child, "SIGTERM");
      if (!(await waitExit(child, 5000))) {
        killGroup(child, "SIGKILL");
        await waitExit(child, 2000);
      }
    }
    if (!opts.keepDataDir) fs.rmSync(dataDir, { recursive: true, force: true });
    liveDirs.delete(dataDir);
  };

  const fail = async (what: string): Promise<never> => {
    const tails = (Object.keys(logs) as (keyof typeof logs)[])
      .filter((c) => fs.existsSync(logs[c]))
      .map((c) => {
        const errors = errorLines(logs[c]);
        return (
          (errors ? `----- ${c}: error lines -----\n${errors}\n` : "") +
          `----- ${c} (${logs[c]}), last lines -----\n${tail(logs[c], 25)}`
        );
      })
      .join("\n");
    await stop(); // the log tails are in the message; the directory goes unless keepDataDir
    throw new Error(`control plane failed to start: ${what}\n${tails}`);
  };

  try {
    makePki(dataDir);
    if (opts.kubeletClientCert) {
      signClientCert(dataDir, "kubelet-client", "kube-apiserver-kubelet-client", ["system:masters"]);
    }
  } catch (e) {
    return fail((e as Error).message);
  }
  const caPem = fs.readFileSync(path.join(dataDir, "ca.crt"), "utf8");

  const ns = opts.namespace ?? "pulumi-lvm-system";
  const tok = () => randomBytes(24).toString("hex");
  const identities: Record<IdentityName, Identity> = {
    admin: { token: tok(), username: "admin", uid: "uid-admin", groups: ["system:masters"] },
    operator: {
      token: tok(),
      username: `system:serviceaccount:${ns}:pulumi-lvm-operator`,
      uid: "uid-operator",
      groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`],
    },
    agent: {
      token: tok(),
      username: `system:serviceaccount:${ns}:pulumi-lvm-agent`,
      uid: "uid-agent",
      groups: ["system:serviceaccounts", `system:serviceaccounts:${ns}`],
    },
    unprivileged: { token: tok(), username: "unprivileged", uid: "uid-unprivileged", groups: [] },
  };
  const kcmToken = tok();
  fs.writeFileSync(
    path.join(dataDir, "tokens.csv"),
    [
      ...Object.values(identities).map((i) => `${i.token},${i.username},${i.uid},"${i.groups.join(",")}"`),
      `${kcmToken},system:kube-controller-manager,uid-kcm,""`,
      "",
    ].join("\n"),
    { mode: 0o600 },
  );

  /* etcd */
  const etcdBinary = opts.etcdBinary ?? process.env.PULUMI_LVM_ETCD ?? path.join(bin, "etcd");
  let etcdMinor = 0;
  try {
    const v = /etcd Version: 3\.(\d+)/.exec(execFileSync(etcdBinary, ["--version"], { encoding: "utf8" }));
    etcdMinor = Number(v?.[1] ?? 0);
  } catch (e) {
    return fail(`${etcdBinary} --version failed: ${(e as Error).message}`);
  }
  const [etcdPort, etcdPeerPort, apiPort] = await freePorts(3);
  const etcdUrl = `http://127.0.0.1:${etcdPort}`;
  const peerUrl = `http://127.0.0.1:${etcdPeerPort}`;
  children.push(
    startProcess(
      etcdBinary,
      [
        "--name=test",
        `--data-dir=${path.join(dataDir, "etcd")}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=${peerUrl}`,
        `--initial-advertise-peer-urls=${peerUrl}`,
        `--initial-cluster=test=${peerUrl}`,
        "--initial-cluster-state=new",
        // A throw-away test store: durability buys nothing here (etcd >= 3.5 has the flag).
        ...(etcdMinor >= 5 ? ["--unsafe-no-fsync"] : []),
        "--log-level=warn",
      ],
      logs.etcd,
    ),
  );
  const deadline = t0 + (opts.startTimeoutMs ?? 90_000);
  const exited = () => children.find((c) => c.exitCode !== null || c.signalCode !== null);
  for (;;) {
    if ((await httpGet(`${etcdUrl}/health`)) === 200) break;
    const dead = exited();
    if (dead) return fail(`etcd exited (${dead.exitCode ?? dead.signalCode})`);
    if (Date.now() > deadline) return fail("etcd was not healthy in time");
    await sleep(50);
  }
  const etcdMs = Date.now() - t0;

  /* kube-apiserver */
  const url = `https://127.0.0.1:${apiPort}`;
  const issuer = "https://kubernetes.default.svc.cluster.local";
  const f = (name: string) => path.join(dataDir, name);
  children.push(
    startProcess(
      path.join(bin, "kube-apiserver"),
      [
        `--etcd-servers=${etcdUrl}`,
        "--bind-address=127.0.0.1",
        "--advertise-address=127.0.0.1",
        // The "lease" reconciler refuses a loopback advertise address; nothing here needs the
        // default/kubernetes Endpoints to be maintained.
        "--endpoint-reconciler-type=none",
        `--secure-port=${apiPort}`,
        `--cert-dir=${f("certs")}`,
        `--tls-cert-file=${f("apiserver.crt")}`,
        `--tls-private-key-file=${f("apiserver.key")}`,
        `--client-ca-file=${f("ca.crt")}`,
        "--authorization-mode=Node,RBAC",
        `--token-auth-file=${f("tokens.csv")}`,
        `--service-account-issuer=${issuer}`,
        `--service-account-key-file=${f("sa.pub")}`,
        `--service-account-signing-key-file=${f("sa.key")}`,
        `--api-audiences=${issuer}`,
        "--service-cluster-ip-range=10.0.0.0/24",
        "--allow-privileged=false",
        "--profiling=false",
        "--v=1",
        ...(opts.kubeletClientCert
          ? [
              `--kubelet-client-certificate=${f("kubelet-client.crt")}`,
              `--kubelet-client-key=${f("kubelet-client.key")}`,
            ]
          : []),
        ...(opts.apiserverFlags ?? []),
      ],
      logs["kube-apiserver"],
      opts.apiserverEnv,
    ),
  );
  const adminToken = identities.admin.token;
  for (;;) {
    const status = await httpGet(`${url}/readyz`, {
      ca: caPem,
      headers: { authorization: `Bearer ${adminToken}` },
    });
    if (status === 200) break;
    const dead = exited();
    if (dead)
      return fail(
        `${dead === children[0] ? "etcd" : "kube-apiserver"} exited (${dead.exitCode ?? dead.signalCode})`,
      );
    if (Date.now() > deadline)
      return fail(`kube-apiserver /readyz not 200 after ${Date.now() - t0} ms (last: ${status})`);
    await sleep(100);
  }
  const apiserverMs = Date.now() - t0;

  const kubeconfigFor = (who: IdentityName): string => {
    const file = path.join(dataDir, `kubeconfig-${who}`);
    fs.writeFileSync(file, kubeconfigYaml(url, caPem, who, identities[who].token), { mode: 0o600 });
    return file;
  };
  const kubeconfigPath = path.join(dataDir, "kubeconfig");
  fs.writeFileSync(kubeconfigPath, kubeconfigYaml(url, caPem, "admin", adminToken), { mode: 0o600 });

  /* kube-controller-manager (optional) */
  let controllerManagerMs: number | undefined;
  if (opts.controllerManager) {
    const kcmKubeconfig = path.join(dataDir, "kubeconfig-kube-controller-manager");
    fs.writeFileSync(kcmKubeconfig, kubeconfigYaml(url, caPem, "system:kube-controller-manager", kcmToken), {
      mode: 0o600,
    });
    const kcmPort = await freePort();
    const controllers = opts.controllers ?? [
      "garbagecollector",
      "namespace",
      "serviceaccount",
      "serviceaccount-token",
    ];
    children.push(
      startProcess(
        path.join(bin, "kube-controller-manager"),
        [
          `--kubeconfig=${kcmKubeconfig}`,
          `--authentication-kubeconfig=${kcmKubeconfig}`,
          `--authorization-kubeconfig=${kcmKubeconfig}`,
          "--bind-address=127.0.0.1",
          `--secure-port=${kcmPort}`,
          `--cert-dir=${f("kcm-certs")}`,
          "--leader-elect=false",
          // Each controller runs as its own service account (as in a real cluster), so RBAC applies.
          "--use-service-account-credentials=true",
          `--controllers=${controllers.join(",")}`,
          `--service-account-private-key-file=${f("sa.key")}`,
          `--root-ca-file=${f("ca.crt")}`,
          "--profiling=false",
          "--v=1",
        ],
        logs["kube-controller-manager"],
      ),
    );
    for (;;) {
      // /healthz is readable without credentials (--authorization-always-allow-paths default).
      const status = await httpGet(`https://127.0.0.1:${kcmPort}/healthz`, { rejectUnauthorized: false });
      if (status === 200) break;
      const dead = exited();
      if (dead)
        return fail(
          `a component exited (${dead.exitCode ?? dead.signalCode}) while starting kube-controller-manager`,
        );
      if (Date.now() > deadline) return fail("kube-controller-manager /healthz not 200 in time");
      await sleep(100);
    }
    controllerManagerMs = Date.now() - t0;
  }

  /* kube-scheduler (optional) */
  let schedulerMs: number | undefined;
  if (opts.scheduler) {
    const schedBinary = path.join(bin, "kube-scheduler");
    if (!isExecutable(schedBinary)) {
      return fail(`${schedBinary} is missing: run bash ${INSTALL_SCRIPT} kube-scheduler`);
    }
    const schedKubeconfig = kubeconfigFor("admin");
    const schedPort = await freePort();
    children.push(
      startProcess(
        schedBinary,
        [
          `--kubeconfig=${schedKubeconfig}`,
          `--authentication-kubeconfig=${schedKubeconfig}`,
          `--authorization-kubeconfig=${schedKubeconfig}`,
          "--bind-address=127.0.0.1",
          `--secure-port=${schedPort}`,
          "--leader-elect=false",
          "--profiling=false",
          "--v=1",
        ],
        logs["kube-scheduler"],
      ),
    );
    for (;;) {
      const status = await httpGet(`https://127.0.0.1:${schedPort}/healthz`, { rejectUnauthorized: false });
      if (status === 200) break;
      const dead = exited();
      if (dead)
        return fail(`a component exited (${dead.exitCode ?? dead.signalCode}) while starting kube-scheduler`);
      if (Date.now() > deadline) return fail("kube-scheduler /healthz not 200 in time");
      await sleep(100);
    }
    schedulerMs = Date.now() - t0;
  }

  const request = <T = Json>(
    method: string,
    urlPath: string,
    body?: unknown,
    token: string = adminToken,
    ropts: RequestOptions = {},
  ): Promise<Response<T>> =>
    new Promise((resolve, reject) => {
      const payload =
        body === undefined
          ? undefined
          : typeof body === "string" || Buffer.isBuffer(body)
            ? body
            : JSON.stringify(body);
      const contentType =
        ropts.contentType ??
        (method.toUpperCase() === "PATCH" ? "application/merge-patch+json" : "application/json");
      const req = https.request(
        `${url}${urlPath}`,
        {
          method,
          ca: caPem,
          timeout: ropts.timeoutMs ?? 30_000,
          ...(ropts.newConnection ? { agent: false } : {}),
          headers: {
            accept: "application/json",
            authorization: `Bearer ${token}`,
            ...(payload !== undefined
              ? { "content-type": contentType, "content-length": Buffer.byteLength(payload) }
              : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (c: Buffer) => chunks.push(c));
          res.on("end", () => {
            const text = Buffer.concat(chunks).toString("utf8");
            let parsed: Json = text;
            try {
              parsed = text.length ? JSON.parse(text) : undefined;
            } catch {
              /* not JSON: keep the text */
            }
            resolve({ status: res.statusCode ?? 0, body: parsed, headers: res.headers });
          });
        },
      );
      req.on("timeout", () => req.destroy(new Error(`${method} ${urlPath}: timed out`)));
      req.on("error", reject);
      if (payload !== undefined) req.write(payload);
      req.end();
    });

  const createNode = async (name: string, labels: Record<string, string> = {}): Promise<Json> => {
    const r = await request("POST", "/api/v1/nodes", {
      apiVersion: "v1",
      kind: "Node",
      metadata: { name, labels },
    });
    if (r.status !== 201)
      throw new Error(`creating node ${name}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body;
  };

  return {
    url,
    caPem,
    kubeconfigPath,
    binDir: bin,
    dataDir,
    tokens: {
      admin: identities.admin.token,
      operator: identities.operator.token,
      agent: identities.agent.token,
      unprivileged: identities.unprivileged.token,
    },
    identities,
    timings: { etcdMs, apiserverMs, controllerManagerMs, schedulerMs, totalMs: Date.now() - t0 },
    request,
    createNode,
    kubeconfigFor,
    logTail: (component, lines = 40) => tail(logs[component], lines),
    stop,
  };
}

/** The repository root, for tests that read deploy/ or test/fixtures/. */
export const repoRoot = REPO_ROOT;
