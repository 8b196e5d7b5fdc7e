/**
 * The container images of the real-cluster tier, written with the project's one OCI image writer
 * (deploy/image/oci.ts) from binaries built by test/cluster/install.sh and files of this machine —
 * there is no image registry here. Pods use them with `imagePullPolicy: Never`.
 *
 *   pause     the sandbox image: test/cluster/pause (a static Go pause)
 *   tools     the test pods' userland: Debian's static busybox
 *   topolvm   TopoLVM-with-sidecars as upstream's Dockerfile lays it out (/hypertopolvm, /lvmd,
 *             /topolvm-node, /topolvm-controller, /csi-*, /livenessprobe) plus the host tools
 *             topolvm-node and lvmd run in the container (mkfs.*, blkid, mount, nsenter, sh) with
 *             their shared libraries (what upstream's Ubuntu base provides)
 *
 * Archives are cached in $cache/cluster/images/<name>-<key>.oci.tar, the key a hash of every input
 * file's path, size and mtime and of the writer's sources, so a rebuilt binary gives a new image.
 */
import { execFileSync } from "node:child_process";
import { createHash, type Hash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { buildImage, type BuildResult } from "../../deploy/image/build";
import { writeImage } from "../../deploy/image/oci";
import type { LayerSource } from "../../deploy/image/layer";
import type { TarEntry } from "../../deploy/image/tar";
import { cacheDir, REPO_ROOT } from "../vm/guest";
import type { ClusterBinaries } from "./binaries";
import { pin } from "./binaries";

export const PAUSE_IMAGE = "localhost/pulumi-lvm-test/pause:1";
export const TOOLS_IMAGE = "localhost/pulumi-lvm-test/tools:1";
export const TOPOLVM_REPOSITORY = "localhost/pulumi-lvm-test/topolvm-with-sidecar";
/**
 * The product image, as `npm run image` builds it (its layers from the image cache, so after
 * test/image/install.sh only the archive is written again), for the node to import on each boot,
 * and its Debian layer as an image of its own for startCluster's `seededImages`. That layer changes
 * only with deploy/image/debian.lock; the package layer changes with every commit. Once the Debian
 * layer's blob and unpacked snapshot are on the seeded state disk, containerd's import of the product
 * image finds both there and unpacks only the package layer (4 MB gzip instead of 60): the Debian
 * layer's gunzip under TCG was most of a boot's 46 s import of the product image.
 */
export async function productImages(
  log: (line: string) => void,
): Promise<{ readonly product: BuildResult; readonly base: string }> {
  const product = await buildImage({ log });
  const debian = product.layers[0];
  // build.ts writes the Debian layer first, then the package's.
  if (product.layers.length !== 2 || !debian?.createdBy.startsWith("Debian "))
    throw new Error(
      `productImages: expected the product image's layers to be Debian's, then the package's; got ${product.layers.map((l) => l.createdBy).join(", ")}`,
    );
  const base = await cached(PRODUCT_BASE_IMAGE, [debian.file], (archive) =>
    writeImage({ name: PRODUCT_BASE_IMAGE, layers: [debian], config: {}, archive }),
  );
  return { product, base };
}
export const PRODUCT_BASE_IMAGE = "localhost/pulumi-lvm-test/product-base:debian";

export const topolvmImage = () => `${TOPOLVM_REPOSITORY}:${pin("TOPOLVM_VERSION").replace(/^v/, "")}`;

/** Tools topolvm-node and lvmd call inside their container (mount-utils, filesystem, nsenter). */
const TOPOLVM_HOST_TOOLS = [
  "/bin/sh",
  "/bin/rm",
  "/usr/bin/nsenter",
  "/bin/mount",
  "/bin/umount",
  "/sbin/blkid",
  "/sbin/wipefs", // topolvm-node wipes a new volume's stray signatures before its first mkfs
  "/sbin/blockdev", // mount-utils' resize check after every mount (--getsize64, --getro)
  // NodeExpandVolume finds the device behind a published path with "/bin/findmnt", by that absolute
  // path (topolvm internal/driver/node.go); on the usr-merged host /bin is a link to /usr/bin.
  "/bin/findmnt",
  "/sbin/dumpe2fs", // the rest of e2fsprogs as upstream's base image has it (not called by mount-utils today)
  "/sbin/mkfs.ext4",
  "/sbin/mke2fs",
  "/sbin/e2fsck",
  "/sbin/fsck",
  "/sbin/fsck.ext4",
  "/sbin/resize2fs",
  "/sbin/mkfs.xfs",
  "/usr/sbin/xfs_growfs",
  "/sbin/xfs_repair",
  "/usr/sbin/xfs_io",
];

const symlink = (p: string, target: string): TarEntry => ({
  path: p,
  type: "symlink",
  mode: 0o777,
  linkname: target,
});

/** The shared libraries (and the loader) of dynamically linked files, from ldd. */
function sharedLibraries(files: readonly string[]): string[] {
  const libs = new Set<string>();
  for (const f of files) {
    let out = "";
    try {
      out = execFileSync("ldd", [f], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch {
      continue; // "not a dynamic executable" (a static binary or a script)
    }
    for (const m of out.matchAll(/(?:=>\s*)?(\/\S+)\s+\(0x/g)) libs.add(m[1]!);
  }
  return [...libs].sort();
}

/** Host files as layer sources at the same path; a symlinked path (usrmerge) is stored resolved. */
function hostFiles(files: readonly string[]): LayerSource[] {
  return files.map((f) => ({ file: fs.realpathSync(f), to: f }));
}

/**
 * The inputs (cached binaries, at the same path for every checkout) by path, size and mtime; the
 * image writer's sources by their content and their path in the repository, so that two checkouts
 * of one commit (git worktrees) share one archive instead of rebuilding and deleting each other's.
 */
/** Hashes files that live at one path for every checkout (cached binaries, archives) by path, size and mtime. */
export function hashFileStats(h: Hash, files: readonly string[]): Hash {
  for (const f of [...files].sort()) {
    const st = fs.statSync(f);
    h.update(`${f}\0${st.size}\0${st.mtimeMs}\n`);
  }
  return h;
}

function cacheKey(name: string, inputs: readonly string[]): string {
  const h = hashFileStats(createHash("sha256"), inputs);
  const writer = path.join(REPO_ROOT, "deploy", "image");
  for (const e of fs.readdirSync(writer).sort()) {
    const f = path.join(writer, e);
    if (fs.statSync(f).isFile()) h.update(`deploy/image/${e}\0`).update(fs.readFileSync(f));
  }
  h.update(name);
  return h.digest("hex").slice(0, 16);
}

/** Archives of other keys are deleted once this old: a younger one may be in use by another run. */
const STALE_MS = 24 * 3600_000;

async function cached(
  name: string,
  inputs: readonly string[],
  build: (archive: string) => Promise<unknown>,
): Promise<string> {
  const dir = path.join(cacheDir(), "cluster", "images");
  fs.mkdirSync(dir, { recursive: true });
  const short = name.replace(/^.*\//, "").replace(/[:]/g, "-");
  const archive = path.join(dir, `${short}-${cacheKey(name, inputs)}.oci.tar`);
  if (fs.existsSync(archive)) return archive;
  const tmp = `${archive}.${process.pid}.tmp`;
  await build(tmp);
  fs.renameSync(tmp, archive);
  for (const old of fs.readdirSync(dir)) {
    const f = path.join(dir, old);
    if (!old.startsWith(`${short}-`) || f === archive) continue;
    // A test run imports archives minutes after resolving them: never delete one it may be using.
    if (Date.now() - (fs.statSync(f, { throwIfNoEntry: false })?.mtimeMs ?? Date.now()) > STALE_MS)
      fs.rmSync(f, { force: true });
  }
  return archive;
}

export async function pauseImage(b: ClusterBinaries): Promise<string> {
  return cached(PAUSE_IMAGE, [b.pause], (archive) =>
    writeImage({
      name: PAUSE_IMAGE,
      layers: [{ sources: [{ file: b.pause, to: "/pause", mode: 0o755 }] }],
      config: { entrypoint: ["/pause"], user: "65535:65535" },
      archive,
    }),
  );
}

const TOOLS_APPLETS = [
  "sh",
  "cat",
  "dd",
  "echo",
  "ls",
  "sha256sum",
  "sleep",
  "sync",
  "df",
  "head",
  "rm",
  "mkdir",
];

export async function toolsImage(): Promise<string> {
  const busybox = "/bin/busybox";
  return cached(TOOLS_IMAGE, [busybox], (archive) =>
    writeImage({
      name: TOOLS_IMAGE,
      layers: [
        {
          sources: [
            { file: busybox, to: "/bin/busybox", mode: 0o755 },
            { entries: TOOLS_APPLETS.map((a) => symlink(`bin/${a}`, "busybox")) },
          ],
        },
      ],
      config: { entrypoint: ["/bin/sh"], env: ["PATH=/bin"] },
      archive,
    }),
  );
}

export async function topolvmImageArchive(b: ClusterBinaries): Promise<string> {
  const tools = TOPOLVM_HOST_TOOLS.filter((t) => fs.existsSync(t));
  const missing = TOPOLVM_HOST_TOOLS.filter((t) => !fs.existsSync(t));
  if (missing.length) throw new Error(`the TopoLVM image needs these host tools: ${missing.join(", ")}`);
  const libs = sharedLibraries(tools.map((t) => fs.realpathSync(t)));
  const sidecars = Object.entries(b.sidecars).filter(([n]) => n !== "snapshot-controller");
  const inputs = [b.hypertopolvm, ...sidecars.map(([, f]) => f), ...tools, ...libs];
  return cached(topolvmImage(), inputs, (archive) =>
    writeImage({
      name: topolvmImage(),
      layers: [
        {
          sources: [...hostFiles(libs), ...hostFiles(tools)],
          createdBy: "host tools for topolvm-node and lvmd",
        },
        {
          sources: [
            { file: b.hypertopolvm, to: "/hypertopolvm", mode: 0o755 },
            {
              entries: ["lvmd", "topolvm-node", "topolvm-controller", "topolvm-scheduler"].map((n) =>
                symlink(n, "hypertopolvm"),
              ),
            },
          ],
          createdBy: "hypertopolvm",
        },
        {
          sources: sidecars.map(([name, file]) => ({ file, to: `/${name}`, mode: 0o755 })),
          createdBy: "CSI sidecars",
        },
      ],
      config: { entrypoint: ["/hypertopolvm"], env: ["PATH=/usr/sbin:/usr/bin:/sbin:/bin"] },
      archive,
    }),
  );
}

/** The snapshot controller (external-snapshotter's snapshot-controller) alone. */
export const SNAPSHOT_CONTROLLER_IMAGE = "localhost/pulumi-lvm-test/snapshot-controller:1";
export async function snapshotControllerImage(b: ClusterBinaries): Promise<string> {
  const file = b.sidecars["snapshot-controller"]!;
  return cached(SNAPSHOT_CONTROLLER_IMAGE, [file], (archive) =>
    writeImage({
      name: SNAPSHOT_CONTROLLER_IMAGE,
      layers: [{ sources: [{ file, to: "/snapshot-controller", mode: 0o755 }] }],
      config: { entrypoint: ["/snapshot-controller"] },
      archive,
    }),
  );
}
