import { gzipSync } from "node:zlib";

/**
 * A gzipped tar archive (POSIX ustar) of regular files held in memory: what `support-bundle`
 * writes. Hand-written rather than a dependency because this package has no tar library, the
 * support bundle needs only this (a few files it names itself, no links, no directories, no
 * reading of archives) and a library would ship to every Pulumi program and the agent's image.
 * Safe by construction: each name is checked (relative, no `..`, no empty or `.` segment, ASCII)
 * and every entry is a regular file with mode 0644 owned by uid/gid 0.
 */
export interface TarFile {
  /** The path inside the archive, e.g. "support-bundle/logs/lvm-system/agent-x/agent.log". */
  readonly name: string;
  readonly content: string | Uint8Array;
}

/** The archive of `files`, gzipped, each entry with modification time `mtime`. */
export function gzippedTar(files: readonly TarFile[], mtime: Date): Buffer {
  return gzipSync(tar(files, mtime));
}

const BLOCK = 512;
/** ustar's size field: 11 octal digits. */
const MAX_SIZE = 0o77777777777;

/** The uncompressed archive: per file a header block and its content padded to 512 bytes, then two zero blocks. */
export function tar(files: readonly TarFile[], mtime: Date): Buffer {
  const seconds = Math.floor(mtime.getTime() / 1000);
  const parts: Buffer[] = [];
  const seen = new Set<string>();
  for (const file of files) {
    if (seen.has(file.name)) throw new Error(`tar: ${file.name} is in the archive twice`);
    seen.add(file.name);
    const content =
      typeof file.content === "string" ? Buffer.from(file.content, "utf8") : Buffer.from(file.content);
    if (content.length > MAX_SIZE) throw new Error(`tar: ${file.name} is too large for ustar`);
    parts.push(header(file.name, content.length, seconds), content);
    const pad = (BLOCK - (content.length % BLOCK)) % BLOCK;
    if (pad) parts.push(Buffer.alloc(pad));
  }
  parts.push(Buffer.alloc(2 * BLOCK));
  return Buffer.concat(parts);
}

/** One ustar header block for a regular file. */
function header(name: string, size: number, mtime: number): Buffer {
  const [prefix, base] = splitName(name);
  const h = Buffer.alloc(BLOCK);
  const put = (value: string, offset: number, length: number) => h.write(value, offset, length, "ascii");
  const octal = (n: number, length: number) => n.toString(8).padStart(length - 1, "0");
  put(base, 0, 100);
  put(octal(0o644, 8), 100, 8);
  put(octal(0, 8), 108, 8); // uid
  put(octal(0, 8), 116, 8); // gid
  put(octal(size, 12), 124, 12);
  put(octal(mtime, 12), 136, 12);
  put("        ", 148, 8); // the checksum counts its own field as spaces
  put("0", 156, 1); // a regular file
  put("ustar\u0000", 257, 6);
  put("00", 263, 2);
  put(prefix, 345, 155);
  let sum = 0;
  for (const byte of h) sum += byte;
  put(`${sum.toString(8).padStart(6, "0")}\u0000 `, 148, 8);
  return h;
}

/**
 * ustar's name split: up to 100 bytes of name, and a prefix of up to 155 bytes before the last
 * "/" that fits. Refuses a name that would let the archive write outside the directory it is
 * extracted into, or that does not fit.
 */
export function splitName(name: string): [prefix: string, name: string] {
  const segments = name.split("/");
  if (
    !/^[\x20-\x7e]+$/.test(name) ||
    name.startsWith("/") ||
    segments.some((s) => s === "" || s === "." || s === "..")
  )
    throw new Error(`tar: ${JSON.stringify(name)} is not a safe relative path`);
  if (name.length <= 100) return ["", name];
  for (let i = 1; i < segments.length; i++) {
    const prefix = segments.slice(0, i).join("/");
    const rest = segments.slice(i).join("/");
    if (prefix.length <= 155 && rest.length <= 100) return [prefix, rest];
  }
  throw new Error(`tar: ${name} is too long for ustar`);
}
