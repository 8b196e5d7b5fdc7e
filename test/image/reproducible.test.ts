/**
 * Reproducible for each architecture: every platform's Debian layer built a second time from the
 * same lock (no layer cache; the fetched .debs, checked by sha256, are reused) gives the same layer,
 * manifest, index and archive digests and the same SBOMs as the cached build. The package layer is
 * taken from the cache: it is one layer for all platforms, built by `npm pack`, and docs/image.md
 * says how to check it (`npm run image -- --no-cache`).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { buildImage, defaultCacheDir, type BuildResult } from "../../deploy/image/build";

jest.setTimeout(600_000);

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "image-reproducible-"));
});
afterAll(() => {
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const digests = (r: BuildResult) => ({
  index: r.manifestDigest,
  archive: r.archiveDigest,
  platforms: r.platforms.map((p) => ({
    architecture: p.architecture,
    manifest: p.manifestDigest,
    layers: p.layers.map((l) => l.digest),
    sbom: fs.readFileSync(p.sbom, "utf8"),
  })),
});

test("each architecture's Debian layer, built twice, gives the same digests: layers, manifests, index, archive, SBOMs", async () => {
  const cache = defaultCacheDir();
  const first = await buildImage({ archive: path.join(dir, "first", "image.oci.tar") });
  // A second cache with the first's package layer and .debs, but no Debian layer.
  const second = path.join(dir, "cache");
  fs.mkdirSync(path.join(second, "layers"), { recursive: true });
  for (const record of fs.readdirSync(path.join(cache, "layers")).filter((n) => n.startsWith("bundle-")))
    fs.copyFileSync(path.join(cache, "layers", record), path.join(second, "layers", record));
  fs.symlinkSync(path.join(cache, "debs"), path.join(second, "debs"));
  const again = await buildImage({ cacheDir: second, archive: path.join(dir, "again", "image.oci.tar") });

  expect(again.platforms.map((p) => [p.architecture, p.debianCached])).toEqual([
    ["amd64", false],
    ["arm64", false],
  ]);
  expect(again.cached.bundle).toBe(true);
  const [a, b] = [digests(first), digests(again)];
  process.stdout.write(
    `reproducible: index ${b.index}, archive ${b.archive}, ${b.platforms.map((p) => `${p.architecture} ${p.manifest}`).join(", ")}\n`,
  );
  expect(b).toEqual(a);
});
