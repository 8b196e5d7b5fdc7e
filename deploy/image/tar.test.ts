import { execFileSync } from "node:child_process";
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
  linkSync,
  chmodSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { PassThrough, Readable } from "node:stream";
import { collectLayer } from "./layer";
import { readTar, writeTar, type TarEntry } from "./tar";

async function tarBytes(entries: TarEntry[], mtime = 1_700_000_000): Promise<Buffer> {
  const out = new PassThrough();
  const chunks: Buffer[] = [];
  out.on("data", (chunk: Buffer) => chunks.push(chunk));
  await writeTar(entries, { mtime }, out);
  out.end();
  return Buffer.concat(chunks);
}

const longDir = `usr/share/${"d".repeat(120)}`;
const longName = `${longDir}/${"f".repeat(150)}.txt`; // fits neither ustar name nor prefix+name
const sample: TarEntry[] = [
  { path: "etc", type: "dir", mode: 0o755 },
  { path: "etc/passwd", type: "file", mode: 0o644, data: Buffer.from("root:x:0:0::/root:/bin/sh\n") },
  { path: "usr", type: "dir", mode: 0o755 },
  { path: "usr/bin", type: "dir", mode: 0o755 },
  { path: "usr/bin/a", type: "file", mode: 0o755, data: Buffer.alloc(1000, 1) },
  { path: "usr/bin/b", type: "hardlink", mode: 0o755, linkname: "usr/bin/a" },
  { path: "usr/bin/sh", type: "symlink", mode: 0o777, linkname: "dash" },
  { path: "usr/share", type: "dir", mode: 0o755 },
  { path: longDir, type: "dir", mode: 0o700, uid: 65532, gid: 65532 },
  { path: longName, type: "file", mode: 0o600, data: Buffer.from("long") },
];

describe("writeTar", () => {
  it("writes the same bytes every time, which GNU tar lists as written", async () => {
    const first = await tarBytes(sample);
    expect((await tarBytes(sample)).equals(first)).toBe(true);
    const dir = mkdtempSync(join(tmpdir(), "tar-test-"));
    writeFileSync(join(dir, "t.tar"), first);
    const listing = execFileSync("tar", ["--numeric-owner", "-tvf", join(dir, "t.tar")], {
      encoding: "utf8",
    });
    const lines = listing.trim().split("\n");
    expect(lines).toHaveLength(sample.length);
    expect(lines[1]).toMatch(/^-rw-r--r-- 0\/0 +26 2023-11-14 22:13 etc\/passwd$/);
    expect(lines[5]).toMatch(/usr\/bin\/b link to usr\/bin\/a$/);
    expect(lines[6]).toMatch(/^lrwxrwxrwx .* usr\/bin\/sh -> dash$/);
    expect(lines[8]).toMatch(/^drwx------ 65532\/65532 /);
    expect(lines[9]!.endsWith(longName)).toBe(true);
    execFileSync("tar", ["-xf", join(dir, "t.tar"), "-C", dir]);
    expect(readFileSync(join(dir, longName), "utf8")).toBe("long");
    expect(readFileSync(join(dir, "usr/bin/b")).equals(Buffer.alloc(1000, 1))).toBe(true);
  });

  it("changes the bytes when the mtime changes (no hidden clock)", async () => {
    expect((await tarBytes(sample, 1)).equals(await tarBytes(sample, 2))).toBe(false);
  });

  it("refuses bad paths and files without contents", async () => {
    await expect(tarBytes([{ path: "/etc", type: "dir", mode: 0o755 }])).rejects.toThrow(/bad entry path/);
    await expect(tarBytes([{ path: "x", type: "file", mode: 0o644 }])).rejects.toThrow(
      /needs data or source/,
    );
    await expect(tarBytes([{ path: "x", type: "symlink", mode: 0o777 }])).rejects.toThrow(/needs a linkname/);
  });
});

describe("readTar", () => {
  it("reads back what writeTar wrote", async () => {
    const read = [];
    for await (const entry of readTar(Readable.from([await tarBytes(sample)]))) read.push(entry);
    expect(read.map((e) => [e.path, e.type, e.mode, e.linkname ?? ""])).toEqual(
      sample.map((e) => [e.path, e.type, e.mode, e.linkname ?? ""]),
    );
    expect(read[9]!.data!.toString()).toBe("long");
  });

  it.each(["gnu", "pax", "ustar"])("reads GNU tar's %s format, long names included", async (format) => {
    const dir = mkdtempSync(join(tmpdir(), "tar-read-"));
    const root = join(dir, "root");
    const deep = format === "ustar" ? "short" : "d".repeat(120);
    mkdirSync(join(root, deep), { recursive: true });
    writeFileSync(join(root, deep, "file"), "contents");
    symlinkSync("file", join(root, deep, "link"));
    execFileSync("tar", [`--format=${format}`, "-cf", join(dir, "t.tar"), "-C", root, "."]);
    const read = [];
    for await (const entry of readTar(Readable.from([readFileSync(join(dir, "t.tar"))]))) read.push(entry);
    const byPath = Object.fromEntries(read.map((e) => [e.path, e]));
    expect(byPath[`${deep}/file`]!.data!.toString()).toBe("contents");
    expect(byPath[`${deep}/link`]).toMatchObject({ type: "symlink", linkname: "file" });
    expect(byPath[deep]).toMatchObject({ type: "dir" });
    expect(byPath[""]).toBeUndefined();
  });
});

describe("collectLayer", () => {
  it("sorts, adds parents, normalises owners, drops setuid, links same inodes, honours exclude", async () => {
    const dir = mkdtempSync(join(tmpdir(), "layer-"));
    mkdirSync(join(dir, "usr/bin"), { recursive: true });
    mkdirSync(join(dir, "usr/share/man"), { recursive: true });
    writeFileSync(join(dir, "usr/bin/su"), "x");
    chmodSync(join(dir, "usr/bin/su"), 0o4755);
    linkSync(join(dir, "usr/bin/su"), join(dir, "usr/bin/a-su"));
    writeFileSync(join(dir, "usr/share/man/page"), "man");
    const entries = await collectLayer(
      [
        { dir },
        { file: join(dir, "usr/bin/su"), to: "/opt/x/y", mode: 0o700 },
        { entries: [{ path: "./tmp", type: "dir", mode: 0o1777 }] },
      ],
      {
        exclude: (path) => path === "usr/share/man",
        owner: (path) => (path === "tmp" ? { uid: 1, gid: 2 } : undefined),
      },
    );
    expect(
      entries.map((e) => `${e.type} ${e.path} ${e.mode.toString(8)} ${e.uid}:${e.gid} ${e.linkname ?? ""}`),
    ).toEqual([
      "dir opt 755 0:0 ",
      "dir opt/x 755 0:0 ",
      "file opt/x/y 700 0:0 ",
      "dir tmp 1777 1:2 ",
      "dir usr 755 0:0 ",
      "dir usr/bin 755 0:0 ",
      "file usr/bin/a-su 755 0:0 ",
      "hardlink usr/bin/su 755 0:0 usr/bin/a-su",
      "dir usr/share 755 0:0 ",
    ]);
  });

  it("refuses a file over a directory with contents", async () => {
    await expect(
      collectLayer([
        { entries: [{ path: "a/b", type: "file", mode: 0o644, data: Buffer.from("") }] },
        { entries: [{ path: "a", type: "file", mode: 0o644, data: Buffer.from("") }] },
      ]),
    ).rejects.toThrow(/a\/b is under a, a file/);
  });
});
