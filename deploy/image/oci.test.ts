import { createHash } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { MEDIA, writeImage, writeImageIndex, type ImageSpec } from "./oci";

function spec(dir: string, extra: Partial<ImageSpec> = {}): ImageSpec {
  const file = join(dir, "pause");
  writeFileSync(file, "#!/bin/true\n", { mode: 0o755 });
  return {
    name: "localhost/pause:3.10",
    layers: [
      { sources: [{ file, to: "/pause", mode: 0o755 }], createdBy: "the pause binary" },
      {
        sources: [{ entries: [{ path: "etc/motd", type: "file", mode: 0o644, data: Buffer.from("hi\n") }] }],
      },
    ],
    config: {
      entrypoint: ["/pause"],
      user: "65535:65535",
      env: ["PATH=/"],
      labels: { "org.opencontainers.image.version": "3.10", "a.first": "1" },
    },
    sourceDateEpoch: 1_700_000_000,
    ...extra,
  };
}

const sha = (data: Buffer) => `sha256:${createHash("sha256").update(data).digest("hex")}`;

describe("writeImage", () => {
  it("writes the same archive twice, a valid OCI layout, named for podman, skopeo and containerd", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oci-test-"));
    const first = await writeImage(
      spec(dir, { archive: join(dir, "a.tar"), layoutDir: join(dir, "layout") }),
    );
    const second = await writeImage(spec(dir, { archive: join(dir, "b.tar") }));
    expect(second.manifestDigest).toBe(first.manifestDigest);
    expect(second.archiveDigest).toBe(first.archiveDigest);
    expect(sha(readFileSync(join(dir, "a.tar")))).toBe(first.archiveDigest);
    expect(readFileSync(join(dir, "a.tar")).equals(readFileSync(join(dir, "b.tar")))).toBe(true);

    const layout = join(dir, "layout");
    for (const name of readdirSync(join(layout, "blobs/sha256")))
      expect(sha(readFileSync(join(layout, "blobs/sha256", name)))).toBe(`sha256:${name}`);
    const index = JSON.parse(readFileSync(join(layout, "index.json"), "utf8"));
    expect(index.manifests).toEqual([
      expect.objectContaining({
        digest: first.manifestDigest,
        annotations: {
          "io.containerd.image.name": "localhost/pause:3.10",
          "org.opencontainers.image.ref.name": "3.10",
        },
      }),
    ]);
    const blob = (digest: string) => readFileSync(join(layout, "blobs/sha256", digest.slice(7)));
    const manifest = JSON.parse(blob(first.manifestDigest).toString());
    const config = JSON.parse(blob(manifest.config.digest).toString());
    expect(config).toMatchObject({
      created: "2023-11-14T22:13:20Z",
      config: { Entrypoint: ["/pause"], User: "65535:65535", Env: ["PATH=/"], WorkingDir: "/" },
      rootfs: { type: "layers", diff_ids: first.layers.map((l) => l.diffId) },
      history: [{ created_by: "the pause binary" }, { created_by: "pulumi-lvm deploy/image" }],
    });
    expect(Object.keys(config.config.Labels)).toEqual(["a.first", "org.opencontainers.image.version"]);
    for (const layer of first.layers) {
      const gz = blob(layer.digest);
      expect(gz.readUInt32LE(4)).toBe(0); // gzip mtime field: no timestamp
      expect(sha(gunzipSync(gz))).toBe(layer.diffId);
    }
    const docker = JSON.parse(readFileSync(join(layout, "manifest.json"), "utf8"));
    expect(docker).toEqual([
      {
        Config: `blobs/sha256/${manifest.config.digest.slice(7)}`,
        RepoTags: ["localhost/pause:3.10"],
        Layers: first.layers.map((l) => `blobs/sha256/${l.digest.slice(7)}`),
      },
    ]);
  });

  it("changes the digest when SOURCE_DATE_EPOCH changes", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oci-test-"));
    const a = await writeImage(spec(dir, { archive: join(dir, "a.tar") }));
    const b = await writeImage(spec(dir, { archive: join(dir, "b.tar"), sourceDateEpoch: 1 }));
    expect(b.manifestDigest).not.toBe(a.manifestDigest);
  });

  it("refuses a name without a tag", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oci-test-"));
    await expect(
      writeImage(spec(dir, { name: "localhost/pause", archive: join(dir, "a.tar") })),
    ).rejects.toThrow(/expected a reference with a tag/);
  });
});

describe("writeImageIndex", () => {
  it("writes one index naming a manifest per platform, the same bytes twice, sharing layers given once", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oci-test-"));
    const base = spec(dir);
    const shared = base.layers[1]!;
    const arm = {
      sources: [{ entries: [{ path: "arm", type: "file" as const, mode: 0o644, data: Buffer.from("a") }] }],
    };
    const index = (archive: string, layoutDir?: string) =>
      writeImageIndex({
        name: base.name,
        sourceDateEpoch: 1_700_000_000,
        archive,
        ...(layoutDir ? { layoutDir } : {}),
        platforms: [
          { architecture: "amd64", layers: base.layers, config: base.config },
          { architecture: "arm64", layers: [arm, shared], config: base.config },
        ],
      });
    const first = await index(join(dir, "a.tar"), join(dir, "layout"));
    const second = await index(join(dir, "b.tar"));
    expect(second.indexDigest).toBe(first.indexDigest);
    expect(readFileSync(join(dir, "a.tar")).equals(readFileSync(join(dir, "b.tar")))).toBe(true);

    const layout = join(dir, "layout");
    const blob = (digest: string) =>
      JSON.parse(readFileSync(join(layout, "blobs/sha256", digest.slice(7)), "utf8"));
    const top = JSON.parse(readFileSync(join(layout, "index.json"), "utf8"));
    expect(top.manifests).toEqual([
      {
        mediaType: MEDIA.index,
        digest: first.indexDigest,
        size: expect.any(Number),
        annotations: {
          "io.containerd.image.name": "localhost/pause:3.10",
          "org.opencontainers.image.ref.name": "3.10",
        },
      },
    ]);
    const platforms = blob(first.indexDigest).manifests;
    expect(platforms.map((m: { platform: unknown; digest: string }) => [m.platform, m.digest])).toEqual([
      [{ architecture: "amd64", os: "linux" }, first.images[0]!.manifestDigest],
      [{ architecture: "arm64", os: "linux" }, first.images[1]!.manifestDigest],
    ]);
    expect(blob(blob(first.images[1]!.manifestDigest).config.digest).architecture).toBe("arm64");
    expect(first.images[1]!.layers[1]!.digest).toBe(first.images[0]!.layers[1]!.digest);
    for (const name of readdirSync(join(layout, "blobs/sha256")))
      expect(sha(readFileSync(join(layout, "blobs/sha256", name)))).toBe(`sha256:${name}`);
    // manifest.json (docker load before Docker 25) names the first platform's image.
    const docker = JSON.parse(readFileSync(join(layout, "manifest.json"), "utf8"));
    expect(docker[0].Config).toBe(
      `blobs/sha256/${blob(first.images[0]!.manifestDigest).config.digest.slice(7)}`,
    );
  });

  it("refuses a platform given twice", async () => {
    const dir = mkdtempSync(join(tmpdir(), "oci-test-"));
    const { layers, config, name } = spec(dir);
    await expect(
      writeImageIndex({
        name,
        archive: join(dir, "a.tar"),
        platforms: [
          { architecture: "arm64", layers, config },
          { architecture: "arm64", layers, config },
        ],
      }),
    ).rejects.toThrow(/a platform twice/);
  });
});
