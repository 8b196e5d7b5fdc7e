/**
 * The pulumi-lvm container image (`npm run image`): one image for the agent and the operator.
 *
 *   layer 1: Debian packages pinned in deploy/image/debian.lock (debian.ts), docs trimmed to their
 *            copyright files, plus /etc/passwd (root, nonroot 65532) and /tmp; mtimes = the lock's
 *            release date, so the layer changes only when the lock does.
 *   layer 2: the npm package with its production dependencies (bundle.ts) in /opt/pulumi-lvm and
 *            /usr/local/bin/pulumi-lvm; mtimes = the commit time.
 *   config:  entrypoint pulumi-lvm, user 65532:65532 (the operator as LvmSystem runs it; the agent's
 *            DaemonSet sets runAsUser 0 and privileged), OCI labels.
 *
 * Output: an oci-archive (default dist/image/pulumi-lvm-<version>.oci.tar) named DEFAULT_IMAGE
 * (src/version.ts). Layers are cached in $PULUMI_LVM_CACHE/image (default ~/.cache/pulumi-lvm/image) by the hash of their inputs.
 * Usage: npm run image -- [--archive FILE] [--name REF:TAG] [--update-lock] [--no-cache]
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
  debianEntries,
  debianMirror,
  fetchDebs,
  formatLock,
  LOCK_FILE,
  readLock,
  resolveLock,
} from "./debian";
import { collectLayer } from "./layer";
import { sourceDateEpoch, writeImage, writeLayer, type ImageResult, type LayerBlob } from "./oci";
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
  /** Rebuild both layers even when cached. @default false */
  readonly noCache?: boolean;
  readonly log?: (line: string) => void;
}

export interface BuildResult extends ImageResult {
  readonly name: string;
  readonly archive: string;
  readonly seconds: { readonly debian: number; readonly bundle: number; readonly total: number };
  readonly cached: { readonly debian: boolean; readonly bundle: boolean };
}

export function defaultArchive(): string {
  return join(REPO_DIR, "dist", "image", `pulumi-lvm-${PACKAGE_VERSION}.oci.tar`);
}

export async function buildImage(options: BuildOptions = {}): Promise<BuildResult> {
  const started = Date.now();
  const log = options.log ?? (() => undefined);
  // Beside the other test binaries: PULUMI_LVM_CACHE moves every cache, so a cold CI run is cold here too.
  const cacheDir =
    options.cacheDir ??
    join(process.env.PULUMI_LVM_CACHE || join(homedir(), ".cache", "pulumi-lvm"), "image");
  const name = options.name ?? DEFAULT_IMAGE;
  const archive = resolve(options.archive ?? defaultArchive());
  const git = (...args: string[]) => execFileSync("git", args, { cwd: REPO_DIR, encoding: "utf8" }).trim();
  const epoch = process.env.SOURCE_DATE_EPOCH ? sourceDateEpoch() : Number(git("log", "-1", "--format=%ct"));
  const dirty = git("status", "--porcelain", "--untracked-files=no") !== "";
  const revision = `${git("rev-parse", "HEAD")}${dirty ? "-dirty" : ""}`;
  const lockText = await readFile(LOCK_FILE, "utf8");
  const lock = await readLock();

  let t = Date.now();
  const debianKey = hash([
    lockText,
    ...ownSources(["tar.ts", "layer.ts", "oci.ts", "debian.ts", "selection.ts", "build.ts"]),
  ]);
  const lockEpoch = Math.floor(Date.parse(lock.release.replace(/^.*Release of /, "")) / 1000);
  if (!Number.isFinite(lockEpoch)) throw new Error(`${LOCK_FILE}: no date in "# release: ${lock.release}"`);
  const debian = await cachedLayer(cacheDir, "debian", debianKey, options.noCache, async (blobDir) => {
    log(`image: Debian layer (${lock.packages.length} packages, ${lock.release})`);
    const debs = await fetchDebs(lock, debianMirror(), join(cacheDir, "debs"));
    const entries = await collectLayer(
      [{ entries: await debianEntries(lock, debs) }, { entries: baseFiles(lockText) }],
      {
        exclude: trimmed,
        owner: (path) => (path === "home/nonroot" ? { uid: NONROOT, gid: NONROOT } : undefined),
      },
    );
    return writeLayer(entries, {
      mtime: lockEpoch,
      blobDir,
      createdBy: `Debian ${lock.release}: ${LOCK_NAME}`,
    });
  });
  const debianSeconds = (Date.now() - t) / 1000;

  t = Date.now();
  const bundleKey = hash([
    String(epoch),
    ...packageInputs(),
    ...ownSources(["tar.ts", "layer.ts", "oci.ts", "bundle.ts", "build.ts"]),
  ]);
  const bundle = await cachedLayer(cacheDir, "bundle", bundleKey, options.noCache, async (blobDir) => {
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
      return await writeLayer(entries, {
        mtime: epoch,
        blobDir,
        createdBy: `pulumi-lvm ${built.version} (npm pack)`,
      });
    } finally {
      await rm(work, { recursive: true, force: true });
    }
  });
  const bundleSeconds = (Date.now() - t) / 1000;

  const pkg = JSON.parse(readFileSync(join(REPO_DIR, "package.json"), "utf8")) as {
    description: string;
    license: string;
    repository?: string | { url: string };
  };
  const source = typeof pkg.repository === "string" ? pkg.repository : pkg.repository?.url;
  const result = await writeImage({
    name,
    archive,
    sourceDateEpoch: epoch,
    layers: [debian.blob, bundle.blob],
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
        "org.opencontainers.image.base.name": `debian:${lock.release.split(" ")[0]} (${LOCK_NAME})`,
        ...(source ? { "org.opencontainers.image.source": source } : {}),
        "io.pulumi-lvm.debian.release": lock.release,
      },
    },
  });
  return {
    ...result,
    name,
    archive,
    seconds: { debian: debianSeconds, bundle: bundleSeconds, total: (Date.now() - started) / 1000 },
    cached: { debian: debian.cached, bundle: bundle.cached },
  };
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

/** A layer from the cache when its key is there, else built and remembered. */
async function cachedLayer(
  cacheDir: string,
  kind: string,
  key: string,
  noCache: boolean | undefined,
  build: (blobDir: string) => Promise<LayerBlob>,
): Promise<{ blob: LayerBlob; cached: boolean }> {
  const record = join(cacheDir, "layers", `${kind}-${key}.json`);
  if (!noCache && existsSync(record)) {
    const blob = JSON.parse(await readFile(record, "utf8")) as LayerBlob;
    if (existsSync(blob.file)) return { blob, cached: true };
  }
  const blob = await build(join(cacheDir, "blobs"));
  await mkdir(join(cacheDir, "layers"), { recursive: true });
  await writeFile(record, JSON.stringify(blob));
  return { blob, cached: false };
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

if (require.main === module) {
  const { values } = parseArgs({
    options: {
      archive: { type: "string" },
      name: { type: "string" },
      "update-lock": { type: "boolean" },
      "no-cache": { type: "boolean" },
    },
  });
  const log = (line: string) => process.stderr.write(`${line}\n`);
  (async () => {
    if (values["update-lock"]) {
      const mirror = debianMirror();
      log(`image: resolving ${LOCK_FILE} against ${mirror} …`);
      await writeFile(LOCK_FILE, formatLock(await resolveLock(mirror)));
    }
    const result = await buildImage({
      ...(values.archive ? { archive: values.archive } : {}),
      ...(values.name ? { name: values.name } : {}),
      noCache: values["no-cache"] ?? false,
      log,
    });
    const mb = (bytes: number) => `${(bytes / 1e6).toFixed(1)} MB`;
    log(`image: ${result.name} → ${result.archive}`);
    log(`  manifest ${result.manifestDigest}`);
    log(`  archive  ${result.archiveDigest}`);
    for (const l of result.layers)
      log(`  layer ${l.digest.slice(0, 19)}… ${mb(l.uncompressedSize)} (${mb(l.size)} gzip) ${l.createdBy}`);
    log(
      `  uncompressed ${mb(result.uncompressedSize)}; ${result.seconds.total.toFixed(1)} s (Debian layer ${result.cached.debian ? "cached" : `${result.seconds.debian.toFixed(1)} s`}, package layer ${result.cached.bundle ? "cached" : `${result.seconds.bundle.toFixed(1)} s`})`,
    );
    process.stdout.write(`${JSON.stringify(result, null, 2)}\n`);
  })().catch((error: unknown) => {
    process.stderr.write(`image: ${error instanceof Error ? error.message : String(error)}\n`);
    process.exitCode = 1;
  });
}
