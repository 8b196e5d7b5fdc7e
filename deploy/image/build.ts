/**
 * The pulumi-lvm container image (`npm run image`): one image for the agent and the operator, for
 * linux/amd64 and linux/arm64 (a multi-platform OCI image index; `--platform` builds fewer).
 *
 *   layer 1: Debian packages pinned per architecture in deploy/image/debian.lock (amd64) and
 *            debian.arm64.lock (debian.ts), docs trimmed to their
 *            copyright files, plus /etc/passwd (root, nonroot 65532) and /tmp; mtimes = the lock's
 *            release date, so the layer changes only when the lock does.
 *   layer 2: the npm package with its production dependencies (bundle.ts) in /opt/pulumi-lvm and
 *            /usr/local/bin/pulumi-lvm; mtimes = the commit time. JavaScript only (checked), so
 *            every platform's image shares this one layer.
 *   config:  entrypoint pulumi-lvm, user 65532:65532 (the operator as LvmSystem runs it; the agent's
 *            DaemonSet sets runAsUser 0 and privileged), OCI labels.
 *
 * Output: an oci-archive (default dist/image/pulumi-lvm-<version>.oci.tar) named DEFAULT_IMAGE
 * (src/version.ts), and next to it an SPDX 2.3 SBOM per architecture (sbom.ts:
 * pulumi-lvm-<version>.<arch>.spdx.json). Layers are cached in $PULUMI_LVM_CACHE/image (default
 * ~/.cache/pulumi-lvm/image) by the hash of their inputs; the .deb files by their sha256.
 * Usage: npm run image -- [--archive FILE] [--name REF:TAG] [--platform linux/arm64 …] [--update-lock] [--no-cache]
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { homedir, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { DEFAULT_IMAGE, PACKAGE_VERSION } from "../../src/version";
import { buildBundle } from "./bundle";
import {
  ARCHITECTURES,
  debianEntries,
  debianMirror,
  fetchDebs,
  formatLock,
  lockFile,
  parseLock,
  resolveLock,
  type Architecture,
  type DebianPackage,
} from "./debian";
import { collectLayer } from "./layer";
import {
  sourceDateEpoch,
  writeImage,
  writeImageIndex,
  writeLayer,
  type ImageResult,
  type LayerBlob,
} from "./oci";
import { npmPackages, spdxDocument, type NpmPackage } from "./sbom";
import type { TarEntry } from "./tar";

export const REPO_DIR = resolve(__dirname, "../..");
export const NONROOT = 65532;
export const BUNDLE_DIR = "opt/pulumi-lvm";

export interface BuildOptions {
  /** @default dist/image/pulumi-lvm-<version>.oci.tar */
  readonly archive?: string;
  /** @default DEFAULT_IMAGE */
  readonly name?: string;
  /** @default $PULUMI_LVM_CACHE/image, else ~/.cache/pulumi-lvm/image */
  readonly cacheDir?: string;
  /** Rebuild every layer even when cached. @default false */
  readonly noCache?: boolean;
  /**
   * The architectures to build. Two or more: a multi-platform image (an OCI image index); one: a
   * single image, laid out as before. @default ARCHITECTURES (amd64, arm64)
   */
  readonly platforms?: readonly Architecture[];
  readonly log?: (line: string) => void;
}

/** One architecture's image in a build, with the SPDX SBOM written next to the archive. */
export interface PlatformImage extends ImageResult {
  readonly architecture: Architecture;
  /** The SPDX 2.3 JSON document of this image (sbom.ts). */
  readonly sbom: string;
  readonly debianCached: boolean;
  readonly debianSeconds: number;
}

export interface BuildResult {
  readonly name: string;
  readonly archive: string;
  /** What `name` points at: the image index (several platforms) or the manifest (one); what to pin. */
  readonly manifestDigest: string;
  readonly archiveDigest?: string;
  /** Each architecture's image, in ARCHITECTURES order. */
  readonly platforms: readonly PlatformImage[];
  /** The first platform's layers (amd64 unless `platforms` leaves it out): Debian's, then the package's. */
  readonly layers: readonly LayerBlob[];
  readonly seconds: { readonly debian: number; readonly bundle: number; readonly total: number };
  readonly cached: { readonly debian: boolean; readonly bundle: boolean };
}

/** $PULUMI_LVM_CACHE/image, else ~/.cache/pulumi-lvm/image. */
export function defaultCacheDir(): string {
  return join(process.env.PULUMI_LVM_CACHE || join(homedir(), ".cache", "pulumi-lvm"), "image");
}

export function defaultArchive(): string {
  return join(REPO_DIR, "dist", "image", `pulumi-lvm-${PACKAGE_VERSION}.oci.tar`);
}

export async function buildImage(options: BuildOptions = {}): Promise<BuildResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  // Beside the other test binaries: PULUMI_LVM_CACHE moves every cache, so a cold CI run is cold here too.
  const cacheDir = options.cacheDir ?? defaultCacheDir();
  const name = options.name ?? DEFAULT_IMAGE;
  const archive = resolve(options.archive ?? defaultArchive());
  const platforms = ARCHITECTURES.filter((a) => (options.platforms ?? ARCHITECTURES).includes(a));
  if (platforms.length === 0) throw new Error(`image: no known platform in ${options.platforms}`);
  const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO_DIR, encoding: "utf8" }).trim();
  const epoch = process.env.SOURCE_DATE_EPOCH ? sourceDateEpoch() : Number(git("log", "-1", "--format=%ct"));
  const dirty = git("status", "--porcelain", "--untracked-files=no") !== "";
  const revision = `${git("rev-parse", "HEAD")}${dirty ? "-dirty" : ""}`;

  const debian: Array<{ blob: LayerBlob; meta: DebianMeta; cached: boolean; seconds: number }> = [];
  for (const arch of platforms) {
    const t = Date.now();
    debian.push({
      ...(await debianLayer(arch, cacheDir, options.noCache, log)),
      seconds: (Date.now() - t) / 1000,
    });
  }

  const t = Date.now();
  const bundleKey = hash([
    String(epoch),
    ...packageInputs(),
    ...ownSources(["tar.ts", "layer.ts", "oci.ts", "bundle.ts", "build.ts", "sbom.ts"]),
  ]);
  const bundle = await cachedLayer<NpmPackage[]>(
    cacheDir,
    "bundle",
    bundleKey,
    options.noCache,
    async (blobDir) => {
      const work = await mkdtemp(join(tmpdir(), "pulumi-lvm-bundle-"));
      try {
        log("image: npm package layer (npm pack, production dependencies)");
        const built = await buildBundle({ repoDir: REPO_DIR, outDir: join(work, "bundle"), log });
        const wrapper = `#!/bin/sh\nexec /usr/bin/node /${BUNDLE_DIR}/dist/src/cli/main.js "$@"\n`;
        const entries = await collectLayer([
          { dir: built.dir, to: BUNDLE_DIR },
          {
            entries: [
              { path: "usr/local/bin/pulumi-lvm", type: "file", mode: 0o755, data: Buffer.from(wrapper) },
            ],
          },
        ]);
        // One layer for every platform: the package and its dependencies are JavaScript only.
        const native = entries.filter((e) => e.path.endsWith(".node")).map((e) => e.path);
        if (native.length)
          throw new Error(
            `image: the package layer has native modules, so it cannot serve every platform: ${native}`,
          );
        const blob = await writeLayer(entries, {
          mtime: epoch,
          blobDir,
          createdBy: `pulumi-lvm ${built.version} (npm pack)`,
        });
        return { blob, meta: await npmPackages(built.dir) };
      } finally {
        await rm(work, { recursive: true, force: true });
      }
    },
  );
  const bundleSeconds = (Date.now() - t) / 1000;

  const pkg = JSON.parse(readFileSync(join(REPO_DIR, "package.json"), "utf8")) as {
    description: string;
    license: string;
    repository?: string | { url: string };
  };
  const source = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  const specs = platforms.map((architecture, i) => {
    const { blob, meta } = debian[i]!;
    return {
      architecture,
      os: "linux",
      layers: [blob, bundle.blob],
      config: {
        entrypoint: ["/usr/local/bin/pulumi-lvm"],
        cmd: ["--help"],
        user: `${NONROOT}:${NONROOT}`,
        env: ["PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"],
        labels: {
          "org.opencontainers.image.title": "pulumi-lvm",
          "org.opencontainers.image.description": pkg.description,
          "org.opencontainers.image.version": PACKAGE_VERSION,
          "org.opencontainers.image.revision": revision,
          "org.opencontainers.image.licenses": pkg.license,
          "org.opencontainers.image.created": new Date(epoch * 1000).toISOString().replace(/\.000Z$/, "Z"),
          "org.opencontainers.image.ref.name": name,
          "org.opencontainers.image.base.name": `debian:${meta.release.split(" ")[0]} (${LOCK_NAME})`,
          ...(source ? { "org.opencontainers.image.source": source } : {}),
          "io.pulumi-lvm.debian.release": meta.release,
        },
      },
    };
  });
  const written =
    specs.length === 1
      ? await writeImage({ name, archive, sourceDateEpoch: epoch, ...specs[0]! }).then((image) => ({
          manifestDigest: image.manifestDigest,
          archiveDigest: image.archiveDigest,
          images: [image],
        }))
      : await writeImageIndex({ name, archive, sourceDateEpoch: epoch, platforms: specs }).then((index) => ({
          manifestDigest: index.indexDigest,
          archiveDigest: index.archiveDigest,
          images: index.images,
        }));
  const results: PlatformImage[] = [];
  for (const [i, architecture] of platforms.entries()) {
    const image = written.images[i]!;
    const sbom = sbomPath(archive, architecture);
    const document = spdxDocument({
      name,
      architecture,
      version: PACKAGE_VERSION,
      manifestDigest: image.manifestDigest,
      created: new Date(epoch * 1000).toISOString().replace(/\.000Z$/, "Z"),
      distro: `debian-${debian[i]!.meta.release.match(/Debian (\d+)/)?.[1] ?? "unknown"}`,
      debian: debian[i]!.meta.packages,
      npm: bundle.meta,
    });
    await writeFile(sbom, `${JSON.stringify(document, null, 2)}\n`);
    results.push({
      ...image,
      architecture,
      sbom,
      debianCached: debian[i]!.cached,
      debianSeconds: debian[i]!.seconds,
    });
  }
  return {
    name,
    archive,
    manifestDigest: written.manifestDigest,
    ...(written.archiveDigest ? { archiveDigest: written.archiveDigest } : {}),
    platforms: results,
    layers: results[0]!.layers,
    seconds: {
      debian: debian.reduce((sum, d) => sum + d.seconds, 0),
      bundle: bundleSeconds,
      total: (Date.now() - started) / 1000,
    },
    cached: { debian: debian.every((d) => d.cached), bundle: bundle.cached },
  };
}

/** The SBOM next to an archive: pulumi-lvm-0.1.0.oci.tar → pulumi-lvm-0.1.0.arm64.spdx.json. */
export function sbomPath(archive: string, arch: Architecture): string {
  return `${archive.replace(/\.oci\.tar$|\.tar$/, "")}.${arch}.spdx.json`;
}

interface DebianMeta {
  readonly release: string;
  readonly packages: readonly DebianPackage[];
}

/** One architecture's Debian layer, from the cache when its lock and the image scripts did not change. */
async function debianLayer(
  arch: Architecture,
  cacheDir: string,
  noCache: boolean | undefined,
  log: (line: string) => void,
) {
  const file = lockFile(arch);
  const lockText = await readFile(file, "utf8");
  const lock = parseLock(lockText, file);
  const key = hash([
    arch,
    lockText,
    ...ownSources(["tar.ts", "layer.ts", "oci.ts", "debian.ts", "selection.ts", "build.ts"]),
  ]);
  const lockEpoch = Math.floor(Date.parse(lock.release.replace(/^.*Release of /, "")) / 1000);
  if (!Number.isFinite(lockEpoch)) throw new Error(`${file}: no date in "# release: ${lock.release}"`);
  return cachedLayer<DebianMeta>(cacheDir, `debian-${arch}`, key, noCache, async (blobDir) => {
    log(`image: Debian layer for ${arch} (${lock.packages.length} packages, ${lock.release})`);
    const debs = await fetchDebs(lock, debianMirror(), join(cacheDir, "debs"));
    const unpacked = await debianEntries(lock, debs);
    const entries = await collectLayer([{ entries: unpacked.entries }, { entries: baseFiles(lockText) }], {
      exclude: trimmed,
      owner: (path) => (path === "home/nonroot" ? { uid: NONROOT, gid: NONROOT } : undefined),
    });
    const blob = await writeLayer(entries, {
      mtime: lockEpoch,
      blobDir,
      createdBy: `Debian ${lock.release} ${arch}: ${LOCK_NAME}`,
    });
    return { blob, meta: { release: lock.release, packages: unpacked.packages } };
  });
}

const LOCK_NAME = "/usr/share/pulumi-lvm/debian.lock";

/** What the image leaves out of the Debian packages: documentation but for its copyright files. */
function trimmed(path: string): boolean {
  return (
    /^usr\/share\/(man|info|locale|lintian|bug|bash-completion|zsh|fish)$/.test(path) ||
    (/^usr\/share\/doc\/[^/]+\/[^/]+$/.test(path) && !path.endsWith("/copyright"))
  );
}

/** Users (root; nonroot, the operator's 65532), /tmp, and the lock that says what the layer holds. */
function baseFiles(lockText: string): TarEntry[] {
  const file = (path: string, text: string): TarEntry => ({
    path,
    type: "file",
    mode: 0o644,
    data: Buffer.from(text),
  });
  return [
    file(
      "etc/passwd",
      `root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/usr/sbin/nologin\n`,
    ),
    file("etc/group", `root:x:0:\nnonroot:x:${NONROOT}:\n`),
    { path: "home/nonroot", type: "dir", mode: 0o700 },
    { path: "root", type: "dir", mode: 0o700 },
    { path: "tmp", type: "dir", mode: 0o1777 },
    file(LOCK_NAME.slice(1), lockText),
  ];
}

/** A layer (and what the build learnt making it) from the cache when its key is there, else built and remembered. */
async function cachedLayer<Meta>(
  cacheDir: string,
  kind: string,
  key: string,
  noCache: boolean | undefined,
  build: (blobDir: string) => Promise<{ blob: LayerBlob; meta: Meta }>,
): Promise<{ blob: LayerBlob; meta: Meta; cached: boolean }> {
  const record = join(cacheDir, "layers", `${kind}-${key}.json`);
  if (!noCache && existsSync(record)) {
    const cached = JSON.parse(await readFile(record, "utf8")) as { blob: LayerBlob; meta: Meta };
    if (cached.blob && existsSync(cached.blob.file)) return { ...cached, cached: true };
  }
  const built = await build(join(cacheDir, "blobs"));
  await mkdir(join(cacheDir, "layers"), { recursive: true });
  await writeFile(record, JSON.stringify(built));
  return { ...built, cached: false };
}

function hash(parts: readonly string[]): string {
  const h = createHash("sha256").update(process.version);
  for (const part of parts) h.update(`${part.length}:`).update(part);
  return h.digest("hex").slice(0, 32);
}

function ownSources(names: readonly string[]): string[] {
  return names.map((name) => readFileSync(join(__dirname, name), "utf8"));
}

/** Every file npm pack and its build read: tracked and untracked (not ignored) sources. */
export function packageInputs(): string[] {
  const paths = execFileSync(
    "git",
    [
      "ls-files",
      "-z",
      "--cached",
      "--others",
      "--exclude-standard",
      "--",
      "src",
      "provider",
      "deploy/crds",
      "docs",
      "package.json",
      "package-lock.json",
      "tsconfig.json",
      "README.md",
    ],
    { cwd: REPO_DIR, encoding: "utf8" },
  )
    .split("\0")
    .filter((path) => path && existsSync(join(REPO_DIR, path)))
    .sort();
  return paths.flatMap((path) => [path, readFileSync(join(REPO_DIR, path), "latin1")]);
}

/** "linux/arm64,linux/amd64" or "arm64" (repeatable) → the architectures, refusing others. */
export function parsePlatforms(values: readonly string[]): Architecture[] {
  const archs = values.flatMap((v) => v.split(",")).map((p) => p.trim().replace(/^linux\//, ""));
  const unknown = archs.filter((a) => !(ARCHITECTURES as readonly string[]).includes(a));
  if (unknown.length)
    throw new Error(
      `--platform ${unknown.join(",")}: expected ${ARCHITECTURES.map((a) => `linux/${a}`).join(" or ")}`,
    );
  return archs as Architecture[];
}

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      archive: { type: "string" },
      name: { type: "string" },
      platform: { type: "string", multiple: true },
      "update-lock": { type: "boolean" },
      "no-cache": { type: "boolean" },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  (async () => {
    const platforms = values.platform ? parsePlatforms(values.platform) : [...ARCHITECTURES];
    if (values["update-lock"]) {
      const mirror = debianMirror();
      for (const arch of platforms) {
        log(`image: resolving ${lockFile(arch)} against ${mirror} …`);
        await writeFile(lockFile(arch), formatLock(await resolveLock(mirror, arch)));
      }
    }
    const result = await buildImage({
      ...(values.archive ? { archive: values.archive } : {}),
      ...(values.name ? { name: values.name } : {}),
      noCache: values["no-cache"] ?? false,
      platforms,
      log,
    });
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    log(`image: ${result.name} → ${result.archive}`);
    log(`  ${result.platforms.length > 1 ? "index   " : "manifest"} ${result.manifestDigest}`);
    log(`  archive  ${result.archiveDigest}`);
    for (const p of result.platforms) {
      log(`  linux/${p.architecture}: manifest ${p.manifestDigest}, uncompressed ${mb(p.uncompressedSize)}`);
      for (const l of p.layers)
        log(
          `    layer ${l.digest.slice(0, 19)}… ${mb(l.uncompressedSize)} (${mb(l.size)} gzip) ${l.createdBy}`,
        );
      log(`    SBOM ${p.sbom}`);
      log(`    Debian layer ${p.debianCached ? "cached" : `${p.debianSeconds.toFixed(1)} s`}`);
    }
    log(
      `  ${result.seconds.total.toFixed(1)} s (package layer ${result.cached.bundle ? "cached" : `${result.seconds.bundle.toFixed(1)} s`})`,
    );
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  })().catch((error: unknown) => {
    process.stderr.write(`image: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
