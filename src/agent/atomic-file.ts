import * as fs from "node:fs";
import * as path from "node:path";

/**
 * Writes a file so that readers (and a reboot) see the old content or the new, never a mix: a temp
 * file in the same directory, fsync, rename over the target, fsync the directory.
 */
export function writeFileAtomic(file: string, content: string, mode = 0o644): void {
  const dir = path.dirname(file);
  const tmp = path.join(dir, `.${path.basename(file)}.${process.pid}.${Date.now()}.tmp`);
  let fd: number;
  try {
    fd = fs.openSync(tmp, "wx", mode);
  } catch (e) {
    throw new FileWriteError(file, e);
  }
  try {
    writeAllSync(fd, Buffer.from(content, "utf8"), file);
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
    throw e instanceof FileWriteError ? e : new FileWriteError(file, e);
  }
  fsyncDir(dir);
}

/** Writing a file failed (ENOSPC, EIO, a short write): names the file, never half-done silently. */
export class FileWriteError extends Error {
  readonly code: string | undefined;
  constructor(
    readonly file: string,
    cause: unknown,
  ) {
    const err = cause as NodeJS.ErrnoException;
    super(`cannot write ${file}: ${err instanceof Error ? err.message : String(cause)}`);
    this.name = "FileWriteError";
    this.code = err?.code;
  }
}

/**
 * write() until every byte is written: write(2) may write fewer bytes than asked (a nearly full
 * filesystem), and fs.writeSync returns that count instead of failing. A write that makes no
 * progress fails with ENOSPC. Throws a FileWriteError naming `file`.
 */
export function writeAllSync(fd: number, data: Buffer, file: string): void {
  let off = 0;
  while (off < data.length) {
    let n: number;
    try {
      n = fs.writeSync(fd, data, off, data.length - off);
    } catch (e) {
      throw new FileWriteError(file, e);
    }
    if (n <= 0)
      throw new FileWriteError(
        file,
        Object.assign(new Error(`no space left: ${off} of ${data.length} bytes written (ENOSPC)`), {
          code: "ENOSPC",
        }),
      );
    off += n;
  }
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
