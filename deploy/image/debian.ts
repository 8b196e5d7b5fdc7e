/**
 * The image's Debian root filesystem from pinned packages: a lock file per architecture
 * (deploy/image/debian.lock for amd64, debian.arm64.lock) lists every package of that architecture
 * with its version, pool path and sha256; a build downloads exactly those .deb
 * files from a Debian mirror, checks each hash, and unpacks their data into one layer. No maintainer
 * scripts run (nothing here needs them: no services, no users but ours, no alternatives); the layer
 * carries a dpkg status file so scanners see the versions, and the lock itself.
 *
 * Updating a lock resolves the dependency closure of ROOT_PACKAGES for its architecture with apt
 * (its own state under a temporary directory, the mirror's signed index) and writes the new lock;
 * commit it. The closures differ a little (arm64's pulls in mawk); the versions are the release's.
 */
import { execFile, spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { keepsPath, unpackedPackages } from "./selection";
import { readTar, type TarEntry } from "./tar";

const run = promisify(execFile);

/**
 * What the image needs; apt adds their dependencies. No lvm2, thin-provisioning-tools, lsblk,
 * wipefs or blkid: the agent runs the host's, through nsenter (selection.ts).
 */
export const ROOT_PACKAGES = [
  "base-files", // /etc/os-release, the merged-/usr symlinks, licenses
  "dash", // /bin/sh: the pulumi-lvm wrapper, the state lock's holder
  "nodejs", // runs pulumi-lvm
  "util-linux", // nsenter and flock only (selection.ts PARTIAL_PACKAGES)
];
export const SUITE = "trixie";

/** The image's architectures (Debian's names, which are also OCI's). */
export const ARCHITECTURES = ["amd64", "arm64"] as const;
export type Architecture = (typeof ARCHITECTURES)[number];

/** One lock per architecture: debian.lock for amd64 (the first), debian.<arch>.lock for the others. */
export function lockFile(arch: Architecture): string {
  return join(__dirname, arch === "amd64" ? "debian.lock" : `debian.${arch}.lock`);
}
export const LOCK_FILE = lockFile("amd64");

export interface LockedPackage {
  readonly name: string;
  readonly version: string;
  readonly size: number;
  readonly sha256: string;
  /** Pool path under the mirror. @example "pool/main/n/nodejs/nodejs_20.19.2+dfsg-1+deb13u3_amd64.deb" */
  readonly filename: string;
}

export interface DebianLock {
  /** e.g. "trixie (Debian 13.8), Release of Sat, 21 Nov 2026 09:15:44 UTC" */
  readonly release: string;
  readonly packages: readonly LockedPackage[];
}

export function parseLock(text: string, file = LOCK_FILE): DebianLock {
  let release = "";
  const packages: LockedPackage[] = [];
  for (const [index, line] of text.split("\n").entries()) {
    if (line.startsWith("# release: ")) release = line.slice("# release: ".length);
    if (!line.trim() || line.startsWith("#")) continue;
    const [name, version, size, sha256, filename, extra] = line.trim().split(/\s+/);
    if (!filename || extra !== undefined || !/^[0-9a-f]{64}$/.test(sha256!) || !/^\d+$/.test(size!))
      throw new Error(`${file}:${index + 1}: expected "name version size sha256 pool-path": ${line}`);
    packages.push({ name: name!, version: version!, size: Number(size), sha256: sha256!, filename });
  }
  if (!release || packages.length === 0) throw new Error(`${file}: no "# release:" line or no packages`);
  return { release, packages };
}

export function formatLock(lock: DebianLock): string {
  const rows = [...lock.packages]
    .sort((a, b) => (a.name < b.name ? -1 : 1))
    .map((p) => `${p.name} ${p.version} ${p.size} ${p.sha256} ${p.filename}`);
  return [
    "# The Debian packages of the pulumi-lvm image, pinned (deploy/image/debian.ts).",
    "# Update: npm run image -- --update-lock (resolves the roots' closure again; commit the result).",
    `# roots: ${ROOT_PACKAGES.join(" ")}`,
    `# release: ${lock.release}`,
    "# name version size sha256 pool-path",
    ...rows,
    "",
  ].join("\n");
}

/**
 * The Debian mirror: $PULUMI_LVM_DEBIAN_MIRROR, else the first ".../debian" URI in this machine's apt
 * sources. A snapshot (…/archive/debian/<time>) serves a lock's versions after the mirror moved on.
 */
export function debianMirror(env: NodeJS.ProcessEnv = process.env): string {
  if (env.PULUMI_LVM_DEBIAN_MIRROR) return env.PULUMI_LVM_DEBIAN_MIRROR.replace(/\/$/, "");
  const files = ["/etc/apt/sources.list"];
  if (existsSync("/etc/apt/sources.list.d"))
    for (const name of readdirSync("/etc/apt/sources.list.d").sort())
      files.push(`/etc/apt/sources.list.d/${name}`);
  for (const file of files) {
    if (!existsSync(file)) continue;
    for (const match of readFileSync(file, "utf8").matchAll(/^(?:URIs:|deb)\s+(\S+)/gm)) {
      const uri = match[1]!.replace(/\/$/, "");
      if (/^https?:\/\/.*\/debian$/.test(uri)) return uri;
    }
  }
  throw new Error("no Debian mirror: set PULUMI_LVM_DEBIAN_MIRROR (e.g. a Debian mirror's …/debian URL)");
}

/** Resolves ROOT_PACKAGES' closure in SUITE for `arch` on `mirror` with apt, in a private apt state. */
export async function resolveLock(mirror: string, arch: Architecture = "amd64"): Promise<DebianLock> {
  const dir = await mkdtemp(join(tmpdir(), "pulumi-lvm-apt-"));
  try {
    for (const sub of ["lists/partial", "cache/archives/partial", "state"])
      await mkdir(join(dir, sub), { recursive: true });
    await writeFile(join(dir, "sources.list"), `deb ${mirror} ${SUITE} main\n`);
    await writeFile(join(dir, "status"), "");
    const options = [
      `Dir::Etc::SourceList=${dir}/sources.list`,
      "Dir::Etc::SourceParts=/dev/null",
      `Dir::State::Lists=${dir}/lists`,
      `Dir::Cache=${dir}/cache`,
      `Dir::State=${dir}/state`,
      `Dir::State::Status=${dir}/status`,
      "Dir::Etc::Preferences=/dev/null",
      "Dir::Etc::PreferencesParts=/dev/null",
      "APT::Install-Recommends=false",
      `APT::Architecture=${arch}`,
      `APT::Architectures=${arch}`,
      "Debug::NoLocking=1",
    ].flatMap((o) => ["-o", o]);
    await run("apt-get", [...options, "update", "-qq"], { maxBuffer: 1 << 26 });
    const { stdout: uris } = await run(
      "apt-get",
      [...options, "install", "--print-uris", "-y", "-qq", ...ROOT_PACKAGES],
      {
        maxBuffer: 1 << 26,
      },
    );
    const names = [...uris.matchAll(/^'[^']+' (\S+?)_\S+ \d+ /gm)].map((m) => m[1]!);
    const { stdout: show } = await run("apt-cache", [...options, "show", "--no-all-versions", ...names], {
      maxBuffer: 1 << 26,
    });
    const packages = show
      .split(/\n\n+/)
      .filter((stanza) => stanza.trim())
      .map((stanza) => {
        const field = (name: string) => stanza.match(new RegExp(`^${name}: (.*)$`, "m"))?.[1] ?? "";
        return {
          name: field("Package"),
          version: field("Version"),
          size: Number(field("Size")),
          sha256: field("SHA256"),
          filename: field("Filename"),
        };
      });
    const inRelease = readdirSync(join(dir, "lists")).find((name) => name.endsWith("InRelease"));
    const releaseText = inRelease ? readFileSync(join(dir, "lists", inRelease), "utf8") : "";
    const version = releaseText.match(/^Version: (.*)$/m)?.[1] ?? "?";
    const date = releaseText.match(/^Date: (.*)$/m)?.[1] ?? "?";
    return { release: `${SUITE} (Debian ${version}), Release of ${date}`, packages };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Downloads (or finds in `cacheDir`) every locked .deb, checking its sha256; returns their paths. */
export async function fetchDebs(lock: DebianLock, mirror: string, cacheDir: string): Promise<string[]> {
  await mkdir(cacheDir, { recursive: true });
  const files: string[] = [];
  for (const p of lock.packages) {
    const file = join(cacheDir, `${p.sha256}.deb`);
    if (!existsSync(file)) {
      const url = `${mirror}/${p.filename}`;
      const response = await fetch(url);
      if (!response.ok)
        throw new Error(
          `Debian package ${p.name} ${p.version}: ${url}: HTTP ${response.status}. The mirror no longer serves ` +
            "this lock's version: update the lock (npm run image -- --update-lock) or set " +
            "PULUMI_LVM_DEBIAN_MIRROR to a snapshot of the lock's release date.",
        );
      const data = Buffer.from(await response.arrayBuffer());
      const actual = createHash("sha256").update(data).digest("hex");
      if (actual !== p.sha256)
        throw new Error(
          `Debian package ${p.name} ${p.version}: ${url}: sha256 ${actual}, the lock says ${p.sha256}`,
        );
      await writeFile(`${file}.tmp`, data);
      await rename(`${file}.tmp`, file);
    }
    files.push(file);
  }
  return files;
}

/** A package unpacked into the layer, as its control file and copyright file describe it (for the SBOM). */
export interface DebianPackage {
  readonly name: string;
  readonly version: string;
  /** The .deb's Architecture: the image's, or "all". */
  readonly architecture: string;
  /** The source package, when it is named otherwise. */
  readonly source?: string;
  readonly homepage?: string;
  /** The License: names of its copyright file (Debian's short names), when it is machine-readable. */
  readonly licenses: readonly string[];
  readonly sha256: string;
}

/** The License: names of a machine-readable (DEP-5) Debian copyright file, in order, each once. */
export function copyrightLicenses(text: string): string[] {
  if (!/^Format:\s*\S+/m.test(text)) return [];
  const names = [...text.matchAll(/^License:[ \t]*(\S[^\n]*)$/gm)].map((m) => m[1]!.trim());
  return [...new Set(names)];
}

/**
 * The entries of the Debian layer: the files of the packages the image runs (selection.ts), in
 * lock order (paths under /bin, /sbin, /lib, /lib64 moved to /usr as on a merged-/usr system), and
 * /var/lib/dpkg/status naming those packages only; and those packages, described.
 */
export async function debianEntries(
  lock: DebianLock,
  debs: readonly string[],
): Promise<{ entries: TarEntry[]; packages: DebianPackage[] }> {
  const depends = new Map<string, string>();
  for (const [index, deb] of debs.entries()) {
    const { stdout } = await run("dpkg-deb", ["-f", deb, "Pre-Depends", "Depends"]);
    const field = (name: string) => stdout.match(new RegExp(`^${name}: (.*)$`, "m"))?.[1] ?? "";
    depends.set(lock.packages[index]!.name, [field("Pre-Depends"), field("Depends")].join(","));
  }
  const unpacked = unpackedPackages(ROOT_PACKAGES, depends);
  const entries: TarEntry[] = [];
  const status: string[] = [];
  const packages: DebianPackage[] = [];
  for (const [index, deb] of debs.entries()) {
    const pkg = lock.packages[index]!;
    if (!unpacked.has(pkg.name)) continue;
    const child = spawn("dpkg-deb", ["--fsys-tarfile", deb], { stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr.on("data", (chunk) => (stderr += chunk));
    const exited = new Promise<number>((resolve) => child.on("close", resolve));
    let copyright = "";
    for await (const entry of readTar(child.stdout)) {
      const merged = mergedUsr(entry);
      if (merged && keepsPath(pkg.name, merged.path)) entries.push(merged);
      if (merged?.path === `usr/share/doc/${pkg.name}/copyright` && merged.data)
        copyright = merged.data.toString("utf8");
    }
    const code = await exited;
    if (code !== 0) throw new Error(`dpkg-deb --fsys-tarfile ${deb} (${pkg.name}) exited ${code}: ${stderr}`);
    const { stdout: control } = await run("dpkg-deb", ["-f", deb]);
    status.push(control.trimEnd().replace(/^(Package: .*)$/m, "$1\nStatus: install ok installed"));
    const field = (name: string) => control.match(new RegExp(`^${name}: (.*)$`, "m"))?.[1]?.trim();
    const source = field("Source")?.split(" ")[0];
    const homepage = field("Homepage");
    packages.push({
      name: pkg.name,
      version: pkg.version,
      architecture: field("Architecture") ?? "",
      ...(source && source !== pkg.name ? { source } : {}),
      ...(homepage ? { homepage } : {}),
      licenses: copyrightLicenses(copyright),
      sha256: pkg.sha256,
    });
  }
  entries.push({
    path: "var/lib/dpkg/status",
    type: "file",
    mode: 0o644,
    data: Buffer.from(`${status.join("\n\n")}\n`),
  });
  return { entries, packages };
}

const USR_ALIASES = ["bin", "sbin", "lib", "lib64"];

/**
 * "lib/udev/x" → "usr/lib/udev/x"; a package's own "lib" directory entry is dropped: base-files
 * ships "lib" as the symlink to usr/lib.
 */
function mergedUsr(entry: TarEntry): TarEntry | undefined {
  const [top, ...rest] = entry.path.split("/");
  if (!USR_ALIASES.includes(top!)) return entry;
  if (rest.length === 0) return entry.type === "dir" ? undefined : entry;
  const path = `usr/${entry.path}`;
  if (entry.type !== "hardlink") return { ...entry, path };
  return { ...entry, path, linkname: mergedUsr({ ...entry, path: entry.linkname! })!.path };
}

export async function readLock(file = LOCK_FILE): Promise<DebianLock> {
  return parseLock(await readFile(file, "utf8"), file);
}
