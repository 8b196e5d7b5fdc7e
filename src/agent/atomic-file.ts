import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Writes a file so that readers (and a reboot) see the old content or the new, never a mix: a temp
 * file in the same directory, fsync, rename over the target, fsync the directory.
 */
export function writeFileAtomic(file: string, content: string, mode = 0o644): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  const fd = fs.openSync(tmp, "wx", mode);
  try {
    fs.writeSync(fd, content);
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
  } catch (e) {
    try {
      fs.closeSync(fd);
    } catch {
      /* already closed */
    }
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fsyncDir(dir);
}

/** Makes a directory entry change (create, rename) durable. */
export function fsyncDir(dir: string): void {
  const fd = fs.openSync(dir, "r");
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
