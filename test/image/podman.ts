/**
 * Podman as the image tests run it: rootful, its own storage in a scratch directory (vfs, so no
 * overlay mounts are needed), runc, cgroupfs, host networking. The image is the archive
 * test/image/install.sh builds (`npm run image`), loaded once per test file.
 *
 * Why runc and explicit ulimits: on these machines crun 1.8 refuses the hybrid cgroup layout
 * ("cgroups in hybrid mode not supported"), and the runtime may not raise RLIMIT_NOFILE/NPROC to
 * podman's defaults (EPERM), so containers get the limits this process has.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { defaultArchive } from "../../deploy/image/build";
import { DEFAULT_IMAGE } from "../../src/version";

export const IMAGE = DEFAULT_IMAGE;
export const ARCHIVE = defaultArchive();
const ROOT = "/var/tmp/image-tests";

/** Fails loudly (never skips) when this machine cannot run the image tier. */
export function requireImageTier(): void {
  const missing = ["podman", "runc", "skopeo"].filter(
    (tool) => spawnSync("sh", ["-c", `command -v ${tool}`]).status !== 0,
  );
  if (process.getuid?.() !== 0) missing.push("(root)");
  if (missing.length)
    throw new Error(`the image tier needs ${missing.join(", ")}: run test/setup.sh as root`);
  if (!fs.existsSync(ARCHIVE))
    throw new Error(`no image archive at ${ARCHIVE}: run test/setup.sh (test/image/install.sh builds it)`);
}

export interface RunResult {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

export class Podman {
  readonly dir: string;
  private readonly global: string[];

  constructor(name: string) {
    fs.mkdirSync(ROOT, { recursive: true });
    this.dir = fs.mkdtempSync(path.join(ROOT, `${name}-`));
    this.global = [
      "--root",
      path.join(this.dir, "root"),
      "--runroot",
      path.join(this.dir, "run"),
      "--tmpdir",
      path.join(this.dir, "tmp"),
      "--storage-driver",
      "vfs",
      "--cgroup-manager",
      "cgroupfs",
      "--events-backend",
      "file",
      "--runtime",
      "runc",
    ];
  }

  /** `podman <args>`; throws with stderr unless `allowFailure`. */
  run(args: readonly string[], allowFailure = false): RunResult {
    const r = spawnSync("podman", [...this.global, ...args], { encoding: "utf8", timeout: 300_000 });
    if (!allowFailure && r.status !== 0)
      throw new Error(`podman ${args.join(" ")}: exit ${r.status}\n${r.stderr}${r.error ?? ""}`);
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  }

  /** Loads the image archive; returns podman's "Loaded image" line. */
  load(archive = ARCHIVE): string {
    return this.run(["load", "--input", archive]).stdout.trim();
  }

  /** Flags every container gets here: host network, this process's open-file limit. */
  static runFlags(): string[] {
    const nofile = execFileSync("sh", ["-c", "ulimit -n"], { encoding: "utf8" }).trim();
    return ["--network", "host", "--ulimit", `nofile=${nofile}:${nofile}`, "--ulimit", "nproc=4096:4096"];
  }

  /** `podman run --rm <flags> <image> <args>`, waiting for the exit. */
  runImage(flags: readonly string[], args: readonly string[] = []): RunResult {
    return this.run(["run", "--rm", ...Podman.runFlags(), ...flags, IMAGE, ...args], true);
  }

  /** Starts a container in the background; returns its ID. */
  start(flags: readonly string[], args: readonly string[]): string {
    return this.run(["run", "--detach", ...Podman.runFlags(), ...flags, IMAGE, ...args]).stdout.trim();
  }

  logs(id: string): string {
    const r = this.run(["logs", id], true);
    return `${r.stdout}${r.stderr}`;
  }

  /** The host PID of a running container's first process. */
  pid(id: string): number {
    return Number(this.run(["inspect", "--format", "{{.State.Pid}}", id]).stdout.trim());
  }

  /** Stops every container and removes the storage. */
  cleanup(): void {
    this.run(["rm", "--all", "--force", "--time", "5"], true);
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}

/** The real and effective user IDs of a host process (from /proc). */
export function uidsOf(pid: number): string {
  const line = fs
    .readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("Uid:"));
  return line?.split(/\s+/).slice(1, 3).join(" ") ?? "";
}
