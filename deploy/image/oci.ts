/**
 * A deterministic OCI image writer: layers + an image config → an OCI image layout directory and/or
 * an `oci-archive` tar that `podman load`, `skopeo copy oci-archive:…`, `ctr -n k8s.io images import`
 * and `docker load` accept. Same inputs, same bytes: entries sorted, every mtime SOURCE_DATE_EPOCH,
 * owners 0:0 (unless told), gzip without a timestamp or name, sha256 everywhere.
 *
 * Interface (stable; also used by the cluster tier to package TopoLVM, CSI sidecars and a pause image):
 *
 *   import { writeImage } from "deploy/image/oci";
 *   const image = await writeImage({
 *     name: "localhost/pause:3.10",                    // full reference; both annotations carry it
 *     layers: [{ sources: [{ file: "/path/to/pause", to: "/pause", mode: 0o755 }] }],
 *     config: { entrypoint: ["/pause"], user: "65535:65535" },
 *     sourceDateEpoch: 0,                               // default: $SOURCE_DATE_EPOCH, else 0
 *     archive: "/tmp/pause.oci.tar",                    // and/or layoutDir: "/tmp/pause-oci"
 *   });
 *   image.manifestDigest  // "sha256:…", the digest `podman images --digests` / `ctr images ls` show
 *
 * A layer is either `{ sources, options?, createdBy? }` (LayerSource/LayerOptions: layer.ts) or a
 * `LayerBlob` written before by writeLayer (how a builder caches a layer that did not change).
 * CLI: `npx tsx deploy/image/oci-cli.ts --help`.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { copyFile, mkdir, mkdtemp, rename, rm, stat, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { PassThrough, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { collectLayer, type LayerOptions, type LayerSource } from "./layer";
import { writeTar, type TarEntry } from "./tar";

export interface ImageConfig {
  /** @example ["/usr/bin/pulumi-lvm"] */
  readonly entrypoint?: readonly string[];
  /** @example ["--help"] */
  readonly cmd?: readonly string[];
  /** "uid:gid" or a name in the image's /etc/passwd. @default root */
  readonly user?: string;
  /** @example ["PATH=/usr/local/bin:/usr/bin:/bin"] */
  readonly env?: readonly string[];
  /** @default "/" */
  readonly workingDir?: string;
  /** Image labels (org.opencontainers.image.*); also written as manifest annotations. */
  readonly labels?: Readonly<Record<string, string>>;
  /** @example ["8080/tcp"] */
  readonly exposedPorts?: readonly string[];
  /** @example "SIGTERM" */
  readonly stopSignal?: string;
}

export interface LayerSpec {
  readonly sources: readonly LayerSource[];
  readonly options?: LayerOptions;
  /** The history line of this layer. @default "pulumi-lvm deploy/image" */
  readonly createdBy?: string;
}

/** A layer written to a file: a gzipped tar, its digest and its uncompressed digest (diff ID). */
export interface LayerBlob {
  readonly file: string;
  readonly digest: string;
  readonly diffId: string;
  readonly size: number;
  readonly uncompressedSize: number;
  readonly createdBy: string;
}

export interface ImageSpec {
  /** Full reference, e.g. "localhost/pulumi-lvm:0.1.0": the name the image gets when loaded. */
  readonly name: string;
  readonly layers: ReadonlyArray<LayerSpec | LayerBlob>;
  readonly config: ImageConfig;
  /** Seconds since the epoch for every mtime and `created`. @default $SOURCE_DATE_EPOCH, else 0 */
  readonly sourceDateEpoch?: number;
  /** @default "amd64" */
  readonly architecture?: string;
  /** @default "linux" */
  readonly os?: string;
  /** Write an OCI image layout into this directory (created; must not hold another image). */
  readonly layoutDir?: string;
  /** Write an oci-archive tar here (the layout, tarred). */
  readonly archive?: string;
}

export interface ImageResult {
  readonly manifestDigest: string;
  readonly configDigest: string;
  readonly layers: readonly LayerBlob[];
  /** sha256 of the archive file, when one was written. */
  readonly archiveDigest?: string;
  /** Total uncompressed size of the layers in bytes. */
  readonly uncompressedSize: number;
}

export const MEDIA = {
  index: "application/vnd.oci.image.index.v1+json",
  manifest: "application/vnd.oci.image.manifest.v1+json",
  config: "application/vnd.oci.image.config.v1+json",
  layer: "application/vnd.oci.image.layer.v1.tar+gzip",
} as const;

export function sourceDateEpoch(given?: number): number {
  const value = given ?? (process.env.SOURCE_DATE_EPOCH ? Number(process.env.SOURCE_DATE_EPOCH) : 0);
  if (!Number.isInteger(value) || value < 0)
    throw new Error(`SOURCE_DATE_EPOCH: not a time in seconds: ${value}`);
  return value;
}

/** Writes one layer's gzipped tar into `blobDir` as sha256/<hex>; resolves with its digests. */
export async function writeLayer(
  entries: readonly TarEntry[],
  options: { readonly mtime: number; readonly blobDir: string; readonly createdBy?: string },
): Promise<LayerBlob> {
  await mkdir(join(options.blobDir, "sha256"), { recursive: true });
  const temp = join(options.blobDir, `.layer-${process.pid}-${Date.now()}.tmp`);
  const uncompressed = createHash("sha256");
  const compressed = createHash("sha256");
  let size = 0;
  const tar = new PassThrough();
  const hashIn = tap((chunk) => uncompressed.update(chunk));
  const hashOut = tap((chunk) => {
    compressed.update(chunk);
    size += chunk.length;
  });
  // zlib's gzip header has no name and mtime 0; level 6 is zlib's default (speed vs size).
  const done = pipeline(tar, hashIn, createGzip({ level: 6 }), hashOut, createWriteStream(temp));
  const uncompressedSize = await writeTar(entries, { mtime: options.mtime }, tar);
  tar.end();
  await done;
  const hex = compressed.digest("hex");
  const file = join(options.blobDir, "sha256", hex);
  await rename(temp, file);
  return {
    file,
    digest: `sha256:${hex}`,
    diffId: `sha256:${uncompressed.digest("hex")}`,
    size,
    uncompressedSize,
    createdBy: options.createdBy ?? "pulumi-lvm deploy/image",
  };
}

function tap(each: (chunk: Buffer) => void): Transform {
  return new Transform({
    transform(chunk: Buffer, _encoding, callback) {
      each(chunk);
      callback(null, chunk);
    },
  });
}

/** Writes the image (see the file comment). */
export async function writeImage(spec: ImageSpec): Promise<ImageResult> {
  const { images, archiveDigest } = await writeLayout(spec, [spec], (built, tag) => ({
    index: [descriptor(MEDIA.manifest, built[0]!.manifest, { tag, name: spec.name }, platformOf(spec))],
    blobs: [],
  }));
  return { ...images[0]!, ...(archiveDigest ? { archiveDigest } : {}) };
}

/** One platform's image of a multi-platform index: its layers, config and platform. */
export interface PlatformSpec {
  readonly layers: ReadonlyArray<LayerSpec | LayerBlob>;
  readonly config: ImageConfig;
  /** @example "arm64" */
  readonly architecture: string;
  /** @default "linux" */
  readonly os?: string;
}

export interface IndexSpec extends Omit<ImageSpec, "layers" | "config" | "architecture" | "os"> {
  /** One image per platform, each named in the index by its platform. */
  readonly platforms: readonly PlatformSpec[];
}

export interface IndexResult {
  /** The digest of the multi-platform index: what `name` points at, and what to pin. */
  readonly indexDigest: string;
  /** Each platform's image, in the order given. */
  readonly images: ReadonlyArray<ImageResult & { readonly architecture: string }>;
  readonly archiveDigest?: string;
}

/**
 * Writes a multi-platform image: index.json names one image index (the name's annotations on it),
 * which lists a manifest per platform, as `docker buildx --output type=oci` lays it out; containerd,
 * podman and skopeo pick the manifest of their platform. Docker's manifest.json (read by
 * `docker load` before Docker 25) lists the first platform's image only: it has no platforms.
 */
export async function writeImageIndex(spec: IndexSpec): Promise<IndexResult> {
  if (spec.platforms.length === 0) throw new Error("writeImageIndex: no platforms");
  const archs = spec.platforms.map((p) => `${p.os ?? "linux"}/${p.architecture}`);
  if (new Set(archs).size !== archs.length) throw new Error(`writeImageIndex: a platform twice: ${archs}`);
  let indexDigest = "";
  const { images, archiveDigest } = await writeLayout(
    spec,
    spec.platforms.map((p) => ({ ...p, name: spec.name })),
    (built, tag) => {
      const index = json({
        schemaVersion: 2,
        mediaType: MEDIA.index,
        manifests: built.map((b, i) =>
          descriptor(MEDIA.manifest, b.manifest, undefined, platformOf(spec.platforms[i]!)),
        ),
      });
      indexDigest = sha256(index);
      return {
        index: [descriptor(MEDIA.index, index, { tag, name: spec.name })],
        blobs: [index],
      };
    },
  );
  return {
    indexDigest,
    images: images.map((image, i) => ({ ...image, architecture: spec.platforms[i]!.architecture })),
    ...(archiveDigest ? { archiveDigest } : {}),
  };
}

interface BuiltImage extends ImageResult {
  readonly manifest: Buffer;
  readonly config: Buffer;
}

type Descriptor = Record<string, unknown>;

function descriptor(
  mediaType: string,
  data: Buffer,
  ref?: { tag: string; name: string },
  platform?: { architecture: string; os: string },
): Descriptor {
  return {
    mediaType,
    digest: sha256(data),
    size: data.length,
    ...(ref
      ? {
          annotations: { "io.containerd.image.name": ref.name, "org.opencontainers.image.ref.name": ref.tag },
        }
      : {}),
    ...(platform ? { platform } : {}),
  };
}

function platformOf(p: { architecture?: string; os?: string }) {
  return { architecture: p.architecture ?? "amd64", os: p.os ?? "linux" };
}

/**
 * The layout both writers share: every image's layers, config and manifest as blobs, then
 * index.json as `top` makes it (with any further blobs it needs), manifest.json for the first image.
 */
async function writeLayout(
  out: Pick<ImageSpec, "name" | "sourceDateEpoch" | "layoutDir" | "archive">,
  specs: ReadonlyArray<Pick<ImageSpec, "name" | "layers" | "config" | "architecture" | "os">>,
  top: (built: readonly BuiltImage[], tag: string) => { index: Descriptor[]; blobs: Buffer[] },
): Promise<{ images: BuiltImage[]; archiveDigest?: string }> {
  if (!out.layoutDir && !out.archive) throw new Error("writeImage: give layoutDir, archive or both");
  checkReference(out.name);
  const epoch = sourceDateEpoch(out.sourceDateEpoch);
  const work = await mkdtemp(join(tmpdir(), "oci-image-"));
  try {
    const blobDir = out.layoutDir ? join(out.layoutDir, "blobs") : join(work, "blobs");
    const created = new Date(epoch * 1000).toISOString().replace(/\.000Z$/, "Z");
    const built: BuiltImage[] = [];
    for (const spec of specs) built.push(await buildManifest(spec, epoch, created, blobDir));
    const tag = out.name.slice(out.name.lastIndexOf(":") + 1);
    const { index, blobs } = top(built, tag);
    const first = built[0]!;
    // docker load (before Docker 25) reads manifest.json, the docker-archive index, not index.json.
    const dockerManifest = json([
      {
        Config: `blobs/sha256/${hex(first.configDigest)}`,
        RepoTags: [out.name],
        Layers: first.layers.map((l) => `blobs/sha256/${hex(l.digest)}`),
      },
    ]);
    const small = new Map<string, Buffer>([
      ["oci-layout", json({ imageLayoutVersion: "1.0.0" })],
      ["index.json", json({ schemaVersion: 2, mediaType: MEDIA.index, manifests: index })],
      ["manifest.json", dockerManifest],
    ]);
    for (const data of [...built.flatMap((b) => [b.config, b.manifest]), ...blobs])
      small.set(`blobs/sha256/${hex(sha256(data))}`, data);
    const layers = [...new Map(built.flatMap((b) => b.layers).map((l) => [l.digest, l])).values()];
    if (out.layoutDir) {
      await mkdir(join(out.layoutDir, "blobs", "sha256"), { recursive: true });
      for (const [path, data] of small) await writeFile(join(out.layoutDir, path), data);
      for (const l of layers) {
        const inLayout = join(out.layoutDir, "blobs", "sha256", hex(l.digest));
        if (l.file !== inLayout) await copyFile(l.file, inLayout);
      }
    }
    let archiveDigest: string | undefined;
    if (out.archive) archiveDigest = await writeArchive(out.archive, [...small], layers, epoch);
    return { images: built, ...(archiveDigest ? { archiveDigest } : {}) };
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** One image's layers (written when given as sources), config and manifest. */
async function buildManifest(
  spec: Pick<ImageSpec, "name" | "layers" | "config" | "architecture" | "os">,
  epoch: number,
  created: string,
  blobDir: string,
): Promise<BuiltImage> {
  const layers: LayerBlob[] = [];
  for (const layer of spec.layers) {
    if ("digest" in layer) layers.push(layer);
    else {
      const entries = await collectLayer(layer.sources, layer.options);
      layers.push(await writeLayer(entries, { mtime: epoch, blobDir, createdBy: layer.createdBy }));
    }
  }
  const config = json(imageConfig(spec, layers, created));
  const labels = spec.config.labels ?? {};
  const manifest = json({
    schemaVersion: 2,
    mediaType: MEDIA.manifest,
    config: { mediaType: MEDIA.config, digest: sha256(config), size: config.length },
    layers: layers.map((l) => ({ mediaType: MEDIA.layer, digest: l.digest, size: l.size })),
    ...(Object.keys(labels).length ? { annotations: sorted(labels) } : {}),
  });
  return {
    manifest,
    config,
    manifestDigest: sha256(manifest),
    configDigest: sha256(config),
    layers,
    uncompressedSize: layers.reduce((sum, l) => sum + l.uncompressedSize, 0),
  };
}

function imageConfig(
  spec: Pick<ImageSpec, "config" | "architecture" | "os">,
  layers: readonly LayerBlob[],
  created: string,
) {
  const c = spec.config;
  const config: Record<string, unknown> = {};
  if (c.user) config.User = c.user;
  if (c.exposedPorts) config.ExposedPorts = Object.fromEntries(c.exposedPorts.map((p) => [p, {}]));
  if (c.env) config.Env = [...c.env];
  if (c.entrypoint) config.Entrypoint = [...c.entrypoint];
  if (c.cmd) config.Cmd = [...c.cmd];
  config.WorkingDir = c.workingDir ?? "/";
  if (c.labels) config.Labels = sorted(c.labels);
  if (c.stopSignal) config.StopSignal = c.stopSignal;
  return {
    created,
    architecture: spec.architecture ?? "amd64",
    os: spec.os ?? "linux",
    config,
    rootfs: { type: "layers", diff_ids: layers.map((l) => l.diffId) },
    history: layers.map((l) => ({ created, created_by: l.createdBy })),
  };
}

async function writeArchive(
  archive: string,
  small: ReadonlyArray<[string, Buffer]>,
  layers: readonly LayerBlob[],
  mtime: number,
): Promise<string> {
  const files = new Map<string, TarEntry>();
  for (const [path, data] of small) files.set(path, { path, type: "file", mode: 0o644, data });
  for (const l of layers) {
    const path = `blobs/sha256/${hex(l.digest)}`;
    const { size } = await stat(l.file);
    files.set(path, { path, type: "file", mode: 0o644, source: { file: l.file, size } });
  }
  const entries = await collectLayer([{ entries: [...files.values()] }]);
  await mkdir(dirname(archive), { recursive: true });
  const temp = `${archive}.${process.pid}.tmp`;
  const hash = createHash("sha256");
  const out = new PassThrough();
  const done = pipeline(
    out,
    tap((chunk) => hash.update(chunk)),
    createWriteStream(temp),
  );
  await writeTar(entries, { mtime }, out);
  out.end();
  await done;
  await rename(temp, archive);
  return `sha256:${hash.digest("hex")}`;
}

/** "registry/path/name:tag": a tag is required (it is what the loaded image is called). */
function checkReference(name: string) {
  if (
    !/^[a-z0-9]+([._-][a-z0-9]+)*(:[0-9]+)?(\/[a-z0-9]+([._-]+[a-z0-9]+)*)*:[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(
      name,
    )
  )
    throw new Error(
      `image name "${name}": expected a reference with a tag, e.g. "localhost/pulumi-lvm:0.1.0"`,
    );
}

function json(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value));
}

function sha256(data: Buffer): string {
  return `sha256:${createHash("sha256").update(data).digest("hex")}`;
}

function hex(digest: string): string {
  return digest.slice("sha256:".length);
}

function sorted(record: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
