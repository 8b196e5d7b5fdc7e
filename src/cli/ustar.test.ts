import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzippedTar, splitName } from "./ustar";

let dir: string;
beforeEach(() => (dir = mkdtempSync(join(tmpdir(), "ustar-"))));
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const MTIME = new Date("2025-06-01T10:00:00Z");

test("GNU tar lists and extracts what was written: UTF-8 content by its byte size, empty and block-sized files, a long path", () => {
  const long = `b/${"p".repeat(80)}/${"c".repeat(60)}/${"x".repeat(90)}.log`;
  const files = [
    { name: "b/manifest.json", content: '{"ok":true}\n' },
    { name: "b/utf8.txt", content: "größe: 30 GiB ✓\n" },
    { name: "b/empty.log", content: "" },
    { name: "b/block.bin", content: new Uint8Array(512).fill(7) },
    { name: long, content: "long\n" },
  ];
  const archive = join(dir, "a.tgz");
  writeFileSync(archive, gzippedTar(files, MTIME));
  const listed = execFileSync("tar", ["-tzf", archive], { encoding: "utf8" }).trim().split("\n");
  expect(listed).toEqual(files.map((f) => f.name));
  execFileSync("tar", ["-xzf", archive, "-C", dir]);
  expect(readFileSync(join(dir, "b/utf8.txt"), "utf8")).toBe("größe: 30 GiB ✓\n");
  expect(readFileSync(join(dir, "b/block.bin"))).toEqual(Buffer.alloc(512, 7));
  expect(readFileSync(join(dir, "b/empty.log"), "utf8")).toBe("");
  expect(readFileSync(join(dir, long), "utf8")).toBe("long\n");
  const stat = statSync(join(dir, "b/manifest.json"));
  expect(stat.mode & 0o777).toBe(0o644);
  expect(stat.mtime.getTime()).toBe(MTIME.getTime());
});

test("names that could write outside the extraction directory, or do not fit, are refused", () => {
  for (const bad of ["/etc/passwd", "../x", "a/../../x", "a//b", "a/./b", "", "a/\u00e9", "a\nb"])
    expect(() => splitName(bad)).toThrow("is not a safe relative path");
  expect(() => splitName(`a/${"x".repeat(101)}`)).toThrow("too long for ustar");
  expect(() =>
    gzippedTar(
      [
        { name: "a", content: "1" },
        { name: "a", content: "2" },
      ],
      MTIME,
    ),
  ).toThrow("a is in the archive twice");
  expect(splitName(`${"d".repeat(150)}/file`)).toEqual(["d".repeat(150), "file"]);
});
