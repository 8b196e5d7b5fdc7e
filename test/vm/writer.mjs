// @ts-check
/**
 * Run inside the test guest: a background writer, the workload of a mounted volume while the agent
 * moves its extents (pvmove) underneath it.
 *
 *   node writer.mjs <dir> <slots> <stop-file>
 *
 * Writes 1 MiB files of random data to <dir>/w-<n>, round robin over <slots> file names (so the
 * volume never fills), each with fsync; after each file it appends `<sha256>  <path>` to
 * <dir>/manifest (fsync'd), so the manifest's last line per path is that file's content. Stops
 * when <stop-file> exists, then writes <dir>/result.json: `{ files, bytes, errors, ms }`; every
 * failed write is an entry in `errors` (and the exit code is 1). The test checks the manifest with
 * sha256sum afterwards, independently of this script.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import path from "node:path";
import process from "node:process";

const [dir, slotsText, stopFile] = process.argv.slice(2);
if (!dir || !slotsText || !stopFile) throw new Error("usage: writer.mjs <dir> <slots> <stop-file>");
const slots = Number(slotsText);
const manifest = fs.openSync(path.join(dir, "manifest"), "a");
/** @type {string[]} */
const errors = [];
const started = Date.now();
let files = 0;
const pause = new Int32Array(new SharedArrayBuffer(4));

/** @param {string} file @param {Buffer} data */
function writeDurably(file, data) {
  const fd = fs.openSync(file, "w");
  try {
    fs.writeSync(fd, data);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

while (!fs.existsSync(stopFile)) {
  const file = path.join(dir, `w-${files % slots}`);
  try {
    const data = randomBytes(1024 * 1024);
    writeDurably(file, data);
    fs.writeSync(manifest, `${createHash("sha256").update(data).digest("hex")}  ${file}\n`);
    fs.fsyncSync(manifest);
    files++;
  } catch (e) {
    errors.push(`${file}: ${e instanceof Error ? e.message : String(e)}`);
    if (errors.length > 100) break;
  }
  Atomics.wait(pause, 0, 0, 20); // leave the (emulated) CPUs some room for pvmove
}
fs.closeSync(manifest);
const result = { files, bytes: files * 1024 * 1024, errors, ms: Date.now() - started };
writeDurably(path.join(dir, "result.json"), Buffer.from(JSON.stringify(result)));
process.exit(errors.length ? 1 : 0);
