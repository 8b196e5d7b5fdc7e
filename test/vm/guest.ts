/**
 * A qemu guest with a real Debian kernel (device-mapper, thin pools, snapshots, pvmove, xfs/ext4),
 * for tests that the host kernel cannot run. The guest's userland is the host's own root
 * filesystem, shared read-only over virtio 9p (so lvm2, node and the project tree at the same path
 * are all there); /etc, /var and /root are writable overlays on a per-guest system disk.
 *
 *   const guest = await startGuest({ disks: [{ sizeBytes: 2 * GiB, serial: "SN-A" }] });
 *   afterAll(() => guest?.stop());                       // ALWAYS: stop() kills qemu, removes images
 *   const r = await guest.exec(["lvs", "--reportformat", "json"]);   // argv, never a shell string
 *   const url = `http://127.0.0.1:${guest.hostPort(8080)}`;          // a port forwarded to the guest
 *
 * Channels (see docs/testing-real-kernel.md):
 *   - qemu user-mode networking; each port of `forwardPorts` is forwarded from 127.0.0.1:<random>
 *     on the host to the guest, so a test talks HTTP to a process in the guest (e.g. the agent,
 *     started with guest.spawn) exactly as on a node;
 *   - the command service (test/vm/guest-service.mjs) on one more forwarded port: exec/spawn of
 *     argv arrays, authenticated by a per-guest token;
 *   - the serial console, written to <runDir>/console.log, for boot diagnostics.
 *
 * Nothing is skipped silently: when qemu, the kernel or the initramfs is missing (or the initramfs
 * is stale), startGuest() throws an error that says to run test/vm/install.sh; when the guest does
 * not come up, the error carries the tail of its console.
 */
import { ChildProcess, execFileSync, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import { freePorts } from "../net";

/* ----------------------------------------------------------------------------- options ---- */

export interface DiskSpec {
  /** Size of the (sparse) raw image in bytes; a multiple of 512. */
  readonly sizeBytes: number;
  /**
   * Serial number the guest sees: /sys/block/<vdX>/serial (virtio-blk) or VPD page 0x80
   * (/sys/block/<sdX>/device/vpd_pg80, scsi-hd). At most 20 characters of [A-Za-z0-9._-].
   * @example "SN-AAA111"
   */
  readonly serial: string;
  /**
   * World wide name (NAA), 16 hex digits. Makes the disk a scsi-hd on virtio-scsi, where it shows as
   * /sys/block/<sdX>/device/wwid = "naa.<hex>".
   * @example "0x5000c500a1b2c3d4"
   */
  readonly wwn?: string;
  /** SCSI product (at most 16 characters). Makes the disk a scsi-hd. @default "QEMU HARDDISK" */
  readonly model?: string;
  /** SCSI vendor (at most 8 characters). Makes the disk a scsi-hd. @default "QEMU" */
  readonly vendor?: string;
  /** Bus. @default "scsi" when wwn, model or vendor is given, else "virtio" */
  readonly bus?: "virtio" | "scsi";
  /**
   * A raw image of `sizeBytes` to start from (copied, holes kept) instead of an empty disk, e.g. a
   * cluster node's state disk with its container images already unpacked (test/cluster/cluster.ts).
   */
  readonly seed?: string;
}

export interface GuestOptions {
  /** The test disks, in the order they are attached (the first virtio disk after the system disk is vdb). */
  readonly disks: readonly DiskSpec[];
  /** Guest memory. @default 1536 */
  readonly memoryMiB?: number;
  /** Virtual CPUs. @default 2 */
  readonly cpus?: number;
  /** Guest TCP ports to forward from 127.0.0.1:<random host port>; see Guest.hostPort(). @default [] */
  readonly forwardPorts?: readonly number[];
  /** The guest's hostname (a node name). @default "pl-guest" */
  readonly hostname?: string;
  /** Give up waiting for the command service after this long (per boot). @default 240000 */
  readonly bootTimeoutMs?: number;
  /** Size of the system disk (ext4: the /etc, /var, /root overlays). @default 1 GiB */
  readonly systemDiskBytes?: number;
  /** Keep the run directory (images, console.log) after stop(), for debugging. @default $PULUMI_LVM_VM_KEEP === "1" */
  readonly keepRunDir?: boolean;
  /**
   * "switch": /host becomes the root of pid 1's mount namespace, as on a node after switch_root, so
   * container runtimes' pivot_root and `runc exec` behave as on a node (the cluster tier).
   * "chroot": pid 1 stays the initramfs init and the command service runs chrooted in /host.
   * @default "chroot"
   */
  readonly nodeRoot?: "chroot" | "switch";
}

export interface ExecOptions {
  /** Kill the command (its whole process group) after this long. @default 60000 */
  readonly timeoutMs?: number;
  /** Extra environment variables (added to the service's PATH, HOME, LANG). */
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Written to the command's stdin. */
  readonly stdin?: string;
  /** How stdout/stderr are returned. @default "utf8" */
  readonly encoding?: "utf8" | "base64";
}

export interface ExecResult {
  /** Exit code; null when killed by a signal; 127 when the program could not be started. */
  readonly code: number | null;
  readonly signal: string | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly durationMs: number;
  readonly timedOut: boolean;
}

export interface SpawnOptions {
  readonly env?: Readonly<Record<string, string>>;
  readonly cwd?: string;
  /** Where stdout+stderr go, in the guest. @default /var/log/pl-vm/<program>-<time>.log */
  readonly logFile?: string;
}

export interface BackgroundProcess {
  readonly pid: number;
  readonly argv: readonly string[];
  readonly logFile: string;
  /** null while it runs (and when it was killed by a signal). */
  readonly exitCode: number | null;
  readonly signal: string | null;
}

export interface AttachedDisk extends DiskSpec {
  /** The raw image on the host. */
  readonly image: string;
}

export interface RebootOptions {
  /**
   * The disks' serials in the order to attach them on the next boot (a permutation of all test
   * disks). The images keep their contents; only the order, and so the kernel names, change.
   */
  readonly diskOrder?: readonly string[];
}

export interface Guest {
  readonly hostname: string;
  /** Host directory with the images, job.json and console.log; removed by stop(). */
  readonly runDir: string;
  /** The test disks in their current attach order. */
  readonly disks: readonly AttachedDisk[];
  /** Milliseconds from starting qemu to the command service answering, per boot (the latest last). */
  readonly bootTimesMs: readonly number[];
  /** The host port (on 127.0.0.1) that forwards to this guest port. Throws for ports not in forwardPorts. */
  hostPort(guestPort: number): number;
  /** Runs argv in the guest (as root, in the chroot) and returns its exit code and output. */
  exec(argv: readonly string[], opts?: ExecOptions): Promise<ExecResult>;
  /** Like exec, but throws (argv, exit code, stderr) unless the exit code is 0. Returns stdout. */
  run(argv: readonly string[], opts?: ExecOptions): Promise<string>;
  /** Starts argv in the background in the guest (e.g. the agent); it is stopped by stop()/reboot(). */
  spawn(argv: readonly string[], opts?: SpawnOptions): Promise<{ pid: number; logFile: string }>;
  /** The background processes started by spawn() since this boot, running or exited. */
  processes(): Promise<readonly BackgroundProcess[]>;
  /** Sends a signal (default SIGTERM) to a spawn()ed process's process group. */
  kill(pid: number, signal?: NodeJS.Signals): Promise<void>;
  /** Powers the guest off and boots it again with the same images, optionally in another order. */
  reboot(opts?: RebootOptions): Promise<void>;
  /** The last lines of the serial console (kernel, init and command-service messages). */
  consoleTail(lines?: number): string;
  /** Powers off (kills qemu after a timeout) and removes the run directory. Idempotent. */
  stop(): Promise<void>;
}

/* ---------------------------------------------------------------------- installed files ---- */

const VM_DIR = __dirname;
/** The project tree: at the same path in the guest (through the 9p share of the host's root). */
export const REPO_ROOT = path.resolve(VM_DIR, "..", "..");
export const INSTALL_SCRIPT = path.join(VM_DIR, "install.sh");
/** The guest port of the command service (test/vm/guest-service.mjs). */
export const COMMAND_PORT = 10999;
const SYSTEM_SERIAL = "pl-system";
const GiB = 1024 ** 3;

export function cacheDir(): string {
  return process.env.PULUMI_LVM_CACHE || path.join(os.homedir(), ".cache", "pulumi-lvm");
}

/** The pinned kernel version from install.sh, e.g. "6.1.0-47-amd64". */
export function kernelVersion(): string {
  const text = fs.readFileSync(INSTALL_SCRIPT, "utf8");
  const m = /^KERNEL_ABI="([^"]+)"/m.exec(text);
  if (!m?.[1]) throw new Error(`cannot find KERNEL_ABI="..." in ${INSTALL_SCRIPT}`);
  return `${m[1]}-amd64`;
}

/** sha256(guest-init.sh + modules.txt), first 16 hex digits: the same key install.sh uses. */
export function initHash(): string {
  const h = createHash("sha256");
  h.update(fs.readFileSync(path.join(VM_DIR, "guest-init.sh")));
  h.update(fs.readFileSync(path.join(VM_DIR, "modules.txt")));
  return h.digest("hex").slice(0, 16);
}

export interface VmArtifacts {
  readonly qemu: string;
  readonly kernel: string;
  readonly initramfs: string;
  readonly kernelVersion: string;
}

/** The qemu binary, kernel and initramfs to boot; throws a loud error naming what is missing. */
export function requireVmArtifacts(): VmArtifacts {
  const kver = kernelVersion();
  const dir = path.join(cacheDir(), "vm", kver);
  const a: VmArtifacts = {
    qemu: "/usr/bin/qemu-system-x86_64",
    kernel: path.join(dir, "vmlinuz"),
    initramfs: path.join(dir, `initramfs-${initHash()}.cpio.gz`),
    kernelVersion: kver,
  };
  const missing = [
    fs.existsSync(a.qemu) ? "" : `qemu (${a.qemu})`,
    fs.existsSync(a.kernel) ? "" : `the kernel ${kver} (${a.kernel})`,
    fs.existsSync(a.initramfs)
      ? ""
      : `the initramfs for the current guest-init.sh + modules.txt (${a.initramfs})`,
  ].filter(Boolean);
  if (missing.length === 0) return a;
  const rel = path.relative(process.cwd(), INSTALL_SCRIPT) || INSTALL_SCRIPT;
  throw new Error(
    [
      "",
      "==================================================================================",
      "The real-kernel test tier (qemu) is not installed:",
      ...missing.map((m) => `  missing: ${m}`),
      `  run:     bash ${rel}`,
      "  (installs qemu, downloads the pinned Debian kernel, builds the initramfs; ~15 s cold)",
      "==================================================================================",
    ].join("\n"),
  );
}

/* ----------------------------------------------------------------------------- helpers ---- */

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tailOf(file: string, lines: number): string {
  try {
    return fs
      .readFileSync(file, "utf8")
      .split("\n")
      .slice(-lines - 1)
      .join("\n");
  } catch {
    return `(no ${file})`;
  }
}

interface HttpResult {
  status: number;
  body: unknown;
}

/** Why a call to the guest's command service got no reply: it answered nothing within `timeoutMs`. */
export function noAnswer(timeoutMs: number): string {
  return `no answer in ${timeoutMs} ms`;
}

/** The first line of the error of a call to the guest's command service that got no reply (a timeout, a refusal, a reset). */
export function callFailed(hostname: string, method: string, urlPath: string, why: string): string {
  return `guest ${hostname}: ${method} ${urlPath} failed: ${why}`;
}

/**
 * Whether an error (or an error that quotes it on a line of its own) says the guest's command service
 * stopped answering: a call's timeout (callFailed with noAnswer), not a refusal, an HTTP error or a
 * guest that exited. Under TCG on a loaded host the guest's vCPUs can be starved until its kernel
 * reports a soft lockup or an RCU stall: the emulator's failure, not that of anything under test.
 */
export function guestStoppedAnswering(e: unknown): boolean {
  const text = e instanceof Error ? e.message : "";
  return text.split("\n").some((line) => NO_ANSWER_LINE.test(line));
}

/** callFailed(…, noAnswer(…)) as written above (test/cluster/boot-retry.test.ts holds them together). */
const NO_ANSWER_LINE = /^guest \S+: [A-Z]+ \S+ failed: no answer in \d+ ms$/;

function request(
  port: number,
  method: string,
  urlPath: string,
  token: string | undefined,
  body: unknown,
  timeoutMs: number,
): Promise<HttpResult> {
  return new Promise((resolve, reject) => {
    const text = body === undefined ? undefined : JSON.stringify(body);
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        method,
        path: urlPath,
        agent: false,
        headers: {
          ...(token ? { authorization: `Bearer ${token}` } : {}),
          ...(text ? { "content-type": "application/json", "content-length": Buffer.byteLength(text) } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          const raw = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = raw;
          try {
            parsed = JSON.parse(raw);
          } catch {
            /* not JSON */
          }
          resolve({ status: res.statusCode ?? 0, body: parsed });
        });
        res.on("error", reject);
      },
    );
    req.setTimeout(timeoutMs, () => req.destroy(new Error(noAnswer(timeoutMs))));
    req.on("error", reject);
    req.end(text);
  });
}

const SERIAL_RE = /^[A-Za-z0-9._-]{1,20}$/;
const WWN_RE = /^0x[0-9a-fA-F]{16}$/;
const SCSI_TEXT_RE = /^[A-Za-z0-9 ._-]+$/;

function diskBus(d: DiskSpec): "virtio" | "scsi" {
  return d.bus ?? (d.wwn || d.model || d.vendor ? "scsi" : "virtio");
}

/** Checks the disk specs; errors name the field path. */
export function validateDisks(disks: readonly DiskSpec[]): void {
  const serials = new Set<string>([SYSTEM_SERIAL]);
  disks.forEach((d, i) => {
    const at = `disks[${i}]`;
    if (!Number.isSafeInteger(d.sizeBytes) || d.sizeBytes <= 0 || d.sizeBytes % 512 !== 0) {
      throw new Error(`${at}.sizeBytes must be a positive multiple of 512, got ${d.sizeBytes}`);
    }
    if (!SERIAL_RE.test(d.serial)) {
      throw new Error(
        `${at}.serial must be 1-20 characters of [A-Za-z0-9._-], got ${JSON.stringify(d.serial)}`,
      );
    }
    if (serials.has(d.serial)) throw new Error(`${at}.serial ${d.serial} is used twice (or is reserved)`);
    serials.add(d.serial);
    if (d.wwn !== undefined && !WWN_RE.test(d.wwn)) {
      throw new Error(`${at}.wwn must be 0x followed by 16 hex digits, got ${JSON.stringify(d.wwn)}`);
    }
    if (d.model !== undefined && (d.model.length > 16 || !SCSI_TEXT_RE.test(d.model))) {
      throw new Error(
        `${at}.model must be at most 16 characters of [A-Za-z0-9 ._-], got ${JSON.stringify(d.model)}`,
      );
    }
    if (d.vendor !== undefined && (d.vendor.length > 8 || !SCSI_TEXT_RE.test(d.vendor))) {
      throw new Error(
        `${at}.vendor must be at most 8 characters of [A-Za-z0-9 ._-], got ${JSON.stringify(d.vendor)}`,
      );
    }
    if (d.bus === "virtio" && (d.wwn || d.model || d.vendor)) {
      throw new Error(`${at}: wwn, model and vendor need bus "scsi" (virtio-blk has only a serial)`);
    }
  });
}

/** The qemu device arguments for the system disk and the test disks, in attach order. */
export function diskArgs(systemImage: string, disks: readonly AttachedDisk[]): string[] {
  const args = [
    "-drive",
    `file=${systemImage},if=none,id=sys,format=raw,cache=unsafe`,
    "-device",
    `virtio-blk-pci,drive=sys,serial=${SYSTEM_SERIAL}`,
  ];
  if (disks.some((d) => diskBus(d) === "scsi")) args.push("-device", "virtio-scsi-pci,id=scsi0");
  let scsiId = 0;
  disks.forEach((d, i) => {
    args.push("-drive", `file=${d.image},if=none,id=d${i},format=raw,cache=unsafe,discard=unmap`);
    if (diskBus(d) === "virtio") {
      args.push("-device", `virtio-blk-pci,drive=d${i},serial=${d.serial}`);
    } else {
      const props = [
        "scsi-hd",
        "bus=scsi0.0",
        `drive=d${i}`,
        "channel=0",
        `scsi-id=${scsiId++}`,
        "lun=0",
        `serial=${d.serial}`,
        ...(d.wwn ? [`wwn=${d.wwn.toLowerCase()}`] : []),
        ...(d.vendor ? [`vendor=${d.vendor}`] : []),
        ...(d.model ? [`product=${d.model}`] : []),
      ];
      args.push("-device", props.join(","));
    }
  });
  return args;
}

/* ------------------------------------------------------------- process bookkeeping ---- */

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on("exit", () => {
    for (const child of live) {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        /* gone */
      }
    }
  });
}

function exited(child: ChildProcess): boolean {
  return child.exitCode !== null || child.signalCode !== null;
}

async function waitExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (exited(child)) return true;
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once("exit", () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/** Removes run directories of earlier test processes whose qemu is gone (crashed test runs). */
function sweepStaleRuns(runsDir: string): void {
  let entries: string[] = [];
  try {
    entries = fs.readdirSync(runsDir);
  } catch {
    return;
  }
  for (const e of entries) {
    const dir = path.join(runsDir, e);
    let owner = 0;
    try {
      owner = Number(fs.readFileSync(path.join(dir, "owner.pid"), "utf8"));
    } catch {
      /* no owner file: being created right now, or broken; leave it to its age */
    }
    let alive = false;
    if (owner > 0) {
      try {
        process.kill(owner, 0);
        alive = true;
      } catch {
        alive = false;
      }
    } else {
      alive = Date.now() - fs.statSync(dir).mtimeMs < 3600_000;
    }
    if (!alive) fs.rmSync(dir, { recursive: true, force: true });
  }
}

/* --------------------------------------------------------------------------- the guest ---- */

export async function startGuest(opts: GuestOptions): Promise<Guest> {
  const artifacts = requireVmArtifacts();
  validateDisks(opts.disks);
  const forwardPorts = [...(opts.forwardPorts ?? [])];
  for (const p of forwardPorts) {
    if (!Number.isInteger(p) || p < 1 || p > 65535 || p === COMMAND_PORT) {
      throw new Error(`forwardPorts: ${p} is not a usable guest port (1-65535, not ${COMMAND_PORT})`);
    }
  }
  const hostname = opts.hostname ?? "pl-guest";
  if (!/^[a-z0-9]([a-z0-9.-]{0,61}[a-z0-9])?$/.test(hostname)) {
    throw new Error(`hostname ${JSON.stringify(hostname)} is not a valid node name`);
  }
  if (/^\/(run|proc|sys|dev)(\/|$)/.test(REPO_ROOT)) {
    throw new Error(
      `the project tree ${REPO_ROOT} is under a directory the guest replaces; the guest cannot see it`,
    );
  }
  installExitHook();

  // The run directory is inside the cache, not /tmp: the guest reads job.json through the 9p share.
  const runsDir = path.join(cacheDir(), "vm", "runs");
  fs.mkdirSync(runsDir, { recursive: true });
  sweepStaleRuns(runsDir);
  const runDir = fs.mkdtempSync(path.join(runsDir, `${hostname}-`));
  fs.writeFileSync(path.join(runDir, "owner.pid"), String(process.pid));
  const keep = opts.keepRunDir ?? process.env.PULUMI_LVM_VM_KEEP === "1";
  const consoleLog = path.join(runDir, "console.log");
  const qemuLog = path.join(runDir, "qemu.log");
  const token = randomBytes(24).toString("hex");
  fs.writeFileSync(path.join(runDir, "job.json"), JSON.stringify({ token, port: COMMAND_PORT }), {
    mode: 0o600,
  });
  fs.copyFileSync(path.join(VM_DIR, "guest-service.mjs"), path.join(runDir, "guest-service.mjs"));

  const systemImage = path.join(runDir, "system.img");
  fs.closeSync(fs.openSync(systemImage, "w"));
  fs.truncateSync(systemImage, opts.systemDiskBytes ?? GiB);
  execFileSync("mkfs.ext4", ["-q", "-F", "-L", SYSTEM_SERIAL, systemImage], {
    stdio: ["ignore", "pipe", "pipe"],
  });

  let disks: AttachedDisk[] = opts.disks.map((d, i) => {
    const image = path.join(runDir, `disk${i}-${d.serial}.img`);
    if (d.seed) {
      // cp keeps the holes (SEEK_DATA): a 16 GiB state disk with 0.6 GB written copies in seconds.
      execFileSync("cp", ["--sparse=always", d.seed, image]);
      if (fs.statSync(image).size !== d.sizeBytes)
        throw new Error(`disk ${d.serial}: seed ${d.seed} is not ${d.sizeBytes} bytes`);
    } else {
      fs.closeSync(fs.openSync(image, "w"));
      fs.truncateSync(image, d.sizeBytes);
    }
    return { ...d, image };
  });

  const ports = new Map<number, number>();
  const guestPorts = [COMMAND_PORT, ...forwardPorts];
  const hostPorts = await freePorts(guestPorts.length);
  guestPorts.forEach((p, i) => ports.set(p, hostPorts[i]!));
  const cmdPort = ports.get(COMMAND_PORT)!;

  const bootTimesMs: number[] = [];
  let qemu: ChildProcess | undefined;
  let stopped = false;

  const consoleTail = (lines = 60) => tailOf(consoleLog, lines);
  const diagnostics = () =>
    `----- guest console (${consoleLog}), last lines -----\n${consoleTail(60)}\n` +
    `----- qemu (${qemuLog}) -----\n${tailOf(qemuLog, 20)}`;

  const boot = async (): Promise<void> => {
    const t0 = Date.now();
    fs.appendFileSync(
      consoleLog,
      `\n===== boot ${bootTimesMs.length + 1} at ${new Date().toISOString()} =====\n`,
    );
    const hostfwd = [...ports].map(([g, h]) => `hostfwd=tcp:127.0.0.1:${h}-:${g}`).join(",");
    // A 1 GiB translation cache (qemu 7.2's own default; only what is used is touched): a
    // Kubernetes node runs kubelet, containerd, TopoLVM's binaries and node, and once the cache is
    // full qemu throws all of it away and translates again. With 256 MiB, a round of those programs'
    // starts took 16–23 s against 15–16 s with 1 GiB (2026-12-07, the same guest, warm, two runs each).
    const accel = process.env.PULUMI_LVM_VM_ACCEL || "tcg,thread=multi,tb-size=1024";
    // `max` minus the AVX family: qemu 7.2 (Debian 12) was the first release to emulate AVX/AVX2/
    // FMA/F16C/VAES under TCG, and V8 and glibc pick those paths when CPUID offers them. A CI run
    // (stop 24) lost `node … inventory` in the guest to a SIGSEGV no other run showed; the SSE
    // paths are TCG's long-tested ones, and nothing we test needs AVX. PULUMI_LVM_VM_CPU overrides.
    const cpu = process.env.PULUMI_LVM_VM_CPU || "max,-avx,-avx2,-fma,-f16c,-vaes,-vpclmulqdq";
    const args = [
      ...["-nodefaults", "-no-user-config", "-display", "none", "-no-reboot"],
      ...["-machine", "q35", "-accel", accel, "-cpu", cpu],
      ...["-smp", String(opts.cpus ?? 2), "-m", String(opts.memoryMiB ?? 1536)],
      ...["-kernel", artifacts.kernel, "-initrd", artifacts.initramfs],
      "-append",
      [
        "console=ttyS0",
        "quiet",
        "panic=-1",
        `pl.run=${runDir}`,
        `pl.hostname=${hostname}`,
        `pl.disks=${disks.length + 1}`,
        ...(opts.nodeRoot === "switch" ? ["pl.root=switch"] : []),
      ].join(" "),
      ...["-chardev", `file,id=con,path=${consoleLog},append=on`, "-serial", "chardev:con"],
      "-virtfs",
      "local,path=/,mount_tag=hostroot,security_model=passthrough,readonly=on,multidevs=remap",
      ...["-netdev", `user,id=n0,${hostfwd}`, "-device", "virtio-net-pci,netdev=n0"],
      ...diskArgs(systemImage, disks),
    ];
    fs.writeFileSync(qemuLog, `# ${artifacts.qemu} ${args.join(" ")}\n`);
    const out = fs.openSync(qemuLog, "a");
    const pdeath = fs.existsSync("/usr/bin/setpriv")
      ? ["/usr/bin/setpriv", "--pdeathsig", "SIGKILL", "--"]
      : [];
    const argv = [...pdeath, artifacts.qemu, ...args];
    const child = spawn(argv[0]!, argv.slice(1), { detached: true, stdio: ["ignore", out, out] });
    fs.closeSync(out);
    live.add(child);
    child.on("exit", () => live.delete(child));
    qemu = child;

    const deadline = t0 + (opts.bootTimeoutMs ?? 240_000);
    for (;;) {
      if (exited(child)) {
        throw new Error(
          `the guest ended during boot (qemu exit ${child.exitCode ?? child.signalCode})\n${diagnostics()}`,
        );
      }
      const failed = /PL-INIT-FAILED: .*/.exec(consoleTail(200));
      if (failed) {
        await waitExit(child, 10_000);
        await killQemu();
        throw new Error(`the guest's init failed: ${failed[0]}\n${diagnostics()}`);
      }
      try {
        const r = await request(cmdPort, "GET", "/health", undefined, undefined, 2000);
        if (r.status === 200 && (r.body as { ok?: boolean } | undefined)?.ok) break;
      } catch {
        /* not up yet: qemu accepts forwarded connections before the guest listens */
      }
      if (Date.now() > deadline) {
        await killQemu();
        throw new Error(
          `the guest's command service did not answer within ${opts.bootTimeoutMs ?? 240_000} ms\n${diagnostics()}`,
        );
      }
      await sleep(250);
    }
    bootTimesMs.push(Date.now() - t0);
  };

  const killQemu = async (): Promise<void> => {
    const child = qemu;
    if (!child || exited(child)) return;
    try {
      if (child.pid) process.kill(-child.pid, "SIGKILL");
    } catch {
      /* gone */
    }
    await waitExit(child, 5000);
  };

  const shutdown = async (): Promise<void> => {
    const child = qemu;
    if (!child || exited(child)) return;
    try {
      await request(cmdPort, "POST", "/shutdown", token, {}, 10_000);
    } catch {
      /* the service is gone: kill below */
    }
    if (!(await waitExit(child, 60_000))) await killQemu();
  };

  const call = async <T>(method: string, urlPath: string, body: unknown, timeoutMs: number): Promise<T> => {
    if (stopped) throw new Error(`guest ${hostname} is stopped`);
    if (!qemu || exited(qemu)) throw new Error(`guest ${hostname} is not running\n${diagnostics()}`);
    let r: HttpResult;
    try {
      r = await request(cmdPort, method, urlPath, token, body, timeoutMs);
    } catch (e) {
      throw new Error(`${callFailed(hostname, method, urlPath, (e as Error).message)}\n${diagnostics()}`);
    }
    if (r.status !== 200) {
      throw new Error(
        `guest ${hostname}: ${method} ${urlPath} → HTTP ${r.status}: ${JSON.stringify(r.body)}`,
      );
    }
    return r.body as T;
  };

  const exec = async (argv: readonly string[], o: ExecOptions = {}): Promise<ExecResult> => {
    const timeoutMs = o.timeoutMs ?? 60_000;
    return call<ExecResult>(
      "POST",
      "/exec",
      { argv, env: o.env, cwd: o.cwd, stdin: o.stdin, encoding: o.encoding, timeoutMs },
      timeoutMs + 30_000,
    );
  };

  const guest: Guest = {
    hostname,
    runDir,
    get disks() {
      return disks;
    },
    bootTimesMs,
    hostPort(guestPort: number): number {
      const p = ports.get(guestPort);
      if (p === undefined || guestPort === COMMAND_PORT) {
        throw new Error(
          `guest port ${guestPort} is not forwarded (forwardPorts: [${forwardPorts.join(", ")}])`,
        );
      }
      return p;
    },
    exec,
    async run(argv, o) {
      const r = await exec(argv, o);
      if (r.code !== 0) {
        // Killed by a signal (not our timeout): the guest kernel's log says where (segfault ip,
        // OOM killer); "quiet" keeps those lines off the console, so fetch them.
        const kernel =
          r.signal && !r.timedOut
            ? await exec(["sh", "-c", "dmesg | tail -n 20"], { timeoutMs: 15_000 }).then(
                (d) => `\nguest kernel log (last 20 lines):\n${d.stdout.trim()}`,
                (e: unknown) => `\n(guest kernel log unavailable: ${String(e)})`,
              )
            : "";
        throw new Error(
          `in guest ${hostname}: ${JSON.stringify(argv)} exited ${r.code ?? r.signal}${r.timedOut ? " (timed out)" : ""}\n` +
            `stderr: ${r.stderr.trim()}\nstdout: ${r.stdout.trim().slice(0, 2000)}${kernel}`,
        );
      }
      return r.stdout;
    },
    async spawn(argv, o = {}) {
      return call<{ pid: number; logFile: string }>(
        "POST",
        "/spawn",
        { argv, env: o.env, cwd: o.cwd, logFile: o.logFile },
        30_000,
      );
    },
    async processes() {
      return call<BackgroundProcess[]>("GET", "/processes", undefined, 30_000);
    },
    async kill(pid, signal = "SIGTERM") {
      await call<{ ok: boolean }>("POST", "/kill", { pid, signal }, 30_000);
    },
    async reboot(o = {}) {
      if (o.diskOrder) {
        const bySerial = new Map(disks.map((d) => [d.serial, d]));
        const order = [...o.diskOrder];
        if (
          order.length !== disks.length ||
          new Set(order).size !== order.length ||
          !order.every((s) => bySerial.has(s))
        ) {
          throw new Error(
            `reboot: diskOrder must be a permutation of [${disks.map((d) => d.serial).join(", ")}], got [${order.join(", ")}]`,
          );
        }
        disks = order.map((s) => bySerial.get(s)!);
      }
      await shutdown();
      await boot();
    },
    consoleTail,
    async stop() {
      if (stopped) return;
      stopped = true;
      await shutdown();
      await killQemu();
      if (!keep) fs.rmSync(runDir, { recursive: true, force: true });
    },
  };

  try {
    await boot();
  } catch (e) {
    stopped = true;
    await killQemu();
    if (keep) throw e;
    fs.rmSync(runDir, { recursive: true, force: true });
    (e as Error).message += `\n(${runDir} was removed; PULUMI_LVM_VM_KEEP=1 keeps it)`;
    throw e;
  }
  return guest;
}
