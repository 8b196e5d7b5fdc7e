/**
 * Deterministic tar: the entry model of an image layer, a writer that turns a sorted entry list into
 * exactly the same bytes every time, and a reader for the tar streams a layer may be built from.
 *
 * Interface (stable; used by oci.ts and by other image builders):
 *   - `TarEntry`: one path in a layer (relative, no leading "/" or "./", no trailing "/").
 *   - `writeTar(entries, { mtime }, out)`: writes entries in the order given (callers sort: see
 *     layer.ts), every header with the given mtime, empty user/group names, ustar or PAX for long
 *     names; ends with the two zero blocks. Returns the number of bytes written.
 *   - `readTar(stream)`: yields the entries of a ustar/PAX/GNU tar stream, contents buffered.
 *
 * Hand-written rather than a tar library: determinism is the point, and here every header byte is
 * ours (no atime/ctime PAX records, no user names, no record padding that varies by tool), which is
 * less code than configuring that away and checking it stays away.
 */
import { createReadStream } from "node:fs";
import type { Readable, Writable } from "node:stream";

export type TarEntryType = "file" | "dir" | "symlink" | "hardlink";

export interface TarEntry {
  /** Relative path, "/"-separated, no leading "/" or "./", no trailing "/". @example "usr/bin/node" */
  readonly path: string;
  readonly type: TarEntryType;
  /** Permission bits, at most 0o7777. @example 0o755 */
  readonly mode: number;
  /** @default 0 */
  readonly uid?: number;
  /** @default 0 */
  readonly gid?: number;
  /** A file's contents in memory (one of data and source for a file). */
  readonly data?: Buffer;
  /** A file's contents: a file on this machine, read when written, with its size. */
  readonly source?: { readonly file: string; readonly size: number };
  /** A symlink's target, or a hardlink's target path in the same layer. */
  readonly linkname?: string;
}

const BLOCK = 512;
const TYPE_FLAG: Record<TarEntryType, string> = { file: "0", hardlink: "1", symlink: "2", dir: "5" };

/** Writes `entries` as a tar stream to `out`; resolves with the number of bytes written. */
export async function writeTar(
  entries: Iterable<TarEntry>,
  options: { readonly mtime: number },
  out: Writable,
): Promise<number> {
  let written = 0;
  const write = async (chunk: Buffer) => {
    written += chunk.length;
    if (!out.write(chunk)) await new Promise<void>((resolve) => out.once("drain", resolve));
  };
  for (const entry of entries) {
    const size = entry.type === "file" ? fileSize(entry) : 0;
    for (const header of headers(entry, size, options.mtime)) await write(header);
    if (entry.type !== "file") continue;
    if (entry.data) await write(entry.data);
    else {
      let copied = 0;
      for await (const chunk of createReadStream(entry.source!.file)) {
        copied += (chunk as Buffer).length;
        await write(chunk as Buffer);
      }
      if (copied !== size)
        throw new Error(`tar: ${entry.source!.file} changed size while read (${path(entry)})`);
    }
    if (size % BLOCK) await write(Buffer.alloc(BLOCK - (size % BLOCK)));
  }
  await write(Buffer.alloc(2 * BLOCK));
  return written;
}

function path(entry: TarEntry): string {
  return entry.type === "dir" ? `${entry.path}/` : entry.path;
}

function fileSize(entry: TarEntry): number {
  if (entry.data && entry.source) throw new Error(`tar: ${entry.path}: both data and source`);
  if (entry.data) return entry.data.length;
  if (entry.source) return entry.source.size;
  throw new Error(`tar: ${entry.path}: a file needs data or source`);
}

/** The header block(s) of one entry: a PAX record first when a name does not fit ustar. */
function headers(entry: TarEntry, size: number, mtime: number): Buffer[] {
  if (!entry.path || entry.path.startsWith("/") || entry.path.endsWith("/") || entry.path.startsWith("./"))
    throw new Error(`tar: bad entry path "${entry.path}"`);
  if (entry.mode > 0o7777 || entry.mode < 0) throw new Error(`tar: ${entry.path}: bad mode ${entry.mode}`);
  const name = path(entry);
  const linkname = entry.linkname ?? "";
  if ((entry.type === "symlink" || entry.type === "hardlink") && !linkname)
    throw new Error(`tar: ${entry.path}: a ${entry.type} needs a linkname`);
  const split = splitUstarName(name);
  const pax: string[] = [];
  if (!split) pax.push(paxRecord("path", name));
  if (Buffer.byteLength(linkname) > 100) pax.push(paxRecord("linkpath", linkname));
  if (size > 0o77777777777) throw new Error(`tar: ${entry.path}: larger than 8 GiB`);
  const fields = {
    mode: entry.mode,
    uid: entry.uid ?? 0,
    gid: entry.gid ?? 0,
    mtime,
  };
  const main = header({
    ...fields,
    name: split?.name ?? name.slice(-100),
    prefix: split?.prefix ?? "",
    size,
    type: TYPE_FLAG[entry.type],
    linkname: Buffer.byteLength(linkname) > 100 ? "" : linkname,
  });
  if (pax.length === 0) return [main];
  const body = Buffer.from(pax.join(""));
  const paxName = `PaxHeaders/${name.replace(/\/$/, "").split("/").pop()!}`.slice(0, 100);
  const paxHeader = header({
    ...fields,
    name: paxName,
    prefix: "",
    size: body.length,
    type: "x",
    linkname: "",
  });
  const padding = Buffer.alloc((BLOCK - (body.length % BLOCK)) % BLOCK);
  return [paxHeader, body, padding, main];
}

/** "<len> key=value\n", where len counts the whole record including its own digits. */
function paxRecord(key: string, value: string): string {
  const rest = ` ${key}=${value}\n`;
  let length = Buffer.byteLength(rest) + 1;
  while (String(length).length + Buffer.byteLength(rest) !== length)
    length = String(length).length + Buffer.byteLength(rest);
  return `${length}${rest}`;
}

/** Splits a name into ustar's prefix (≤155 bytes) and name (≤100 bytes) at a "/", or undefined. */
function splitUstarName(name: string): { prefix: string; name: string } | undefined {
  if (Buffer.byteLength(name) <= 100) return { prefix: "", name };
  const trimmed = name.endsWith("/") ? name.slice(0, -1) : name;
  for (let i = trimmed.indexOf("/"); i > 0; i = trimmed.indexOf("/", i + 1)) {
    const prefix = name.slice(0, i);
    const rest = name.slice(i + 1);
    if (Buffer.byteLength(prefix) <= 155 && Buffer.byteLength(rest) <= 100 && rest)
      return { prefix, name: rest };
  }
  return undefined;
}

interface HeaderFields {
  name: string;
  prefix: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  type: string;
  linkname: string;
}

function header(f: HeaderFields): Buffer {
  const block = Buffer.alloc(BLOCK);
  const put = (offset: number, length: number, value: string) => {
    if (Buffer.byteLength(value) > length) throw new Error(`tar: field too long: ${value}`);
    block.write(value, offset, length, "utf8");
  };
  const octal = (offset: number, length: number, value: number) => {
    const digits = value.toString(8).padStart(length - 1, "0");
    if (digits.length > length - 1) throw new Error(`tar: ${f.name}: value ${value} does not fit`);
    put(offset, length, `${digits}\0`);
  };
  put(0, 100, f.name);
  octal(100, 8, f.mode);
  octal(108, 8, f.uid);
  octal(116, 8, f.gid);
  octal(124, 12, f.size);
  octal(136, 12, f.mtime);
  block.fill(0x20, 148, 156); // checksum field counts as spaces
  put(156, 1, f.type);
  put(157, 100, f.linkname);
  put(257, 6, "ustar\0");
  put(263, 2, "00");
  octal(329, 8, 0);
  octal(337, 8, 0);
  put(345, 155, f.prefix);
  let sum = 0;
  for (const byte of block) sum += byte;
  put(148, 8, `${sum.toString(8).padStart(6, "0")}\0 `);
  return block;
}

/* ---------------------------------------------------------------------------------- reading ---- */

/** An entry read from a tar stream. Files carry their contents in `data`. */
export type ReadEntry = TarEntry & { readonly data?: Buffer };

/**
 * Reads a tar stream (ustar, PAX, GNU long names). Device nodes and FIFOs are refused: image layers
 * built here never need them. Paths are normalised (no "./" or "/" prefix); the root entry is skipped.
 */
export async function* readTar(stream: Readable): AsyncGenerator<ReadEntry> {
  // Chunks are kept in a list and joined once per take: appending to one buffer per chunk would
  // copy a large file's bytes again for every chunk.
  let pending: Buffer[] = [];
  let pendingLength = 0;
  const chunks = stream[Symbol.asyncIterator]();
  let ended = false;
  const take = async (length: number): Promise<Buffer> => {
    while (pendingLength < length && !ended) {
      const next = await chunks.next();
      if (next.done) ended = true;
      else {
        pending.push(next.value as Buffer);
        pendingLength += (next.value as Buffer).length;
      }
    }
    if (pendingLength < length) throw new Error("tar: unexpected end of stream");
    const all = pending.length === 1 ? pending[0]! : Buffer.concat(pending, pendingLength);
    const rest = all.subarray(length);
    pending = rest.length ? [rest] : [];
    pendingLength = rest.length;
    return all.subarray(0, length);
  };
  let pax: Record<string, string> = {};
  let longName: string | undefined;
  let longLink: string | undefined;
  for (;;) {
    const block = await take(BLOCK);
    if (block.every((byte) => byte === 0)) {
      // Read what follows the end marker (tar pads to its record size) so the stream can end.
      while (!(await chunks.next()).done);
      return;
    }
    const text = (offset: number, length: number) => {
      const raw = block.subarray(offset, offset + length);
      const end = raw.indexOf(0);
      return raw.subarray(0, end < 0 ? length : end).toString("utf8");
    };
    const number = (offset: number, length: number) => {
      if (block[offset]! & 0x80) return Number(block.readBigUInt64BE(offset + length - 8));
      const digits = text(offset, length).trim();
      return digits ? parseInt(digits, 8) : 0;
    };
    const type = text(156, 1) || "0";
    const size = pax.size !== undefined ? Number(pax.size) : number(124, 12);
    const body = await take(size + ((BLOCK - (size % BLOCK)) % BLOCK));
    const data = Buffer.from(body.subarray(0, size));
    if (type === "x") {
      pax = { ...pax, ...parsePax(data) };
      continue;
    }
    if (type === "g") continue;
    if (type === "L" || type === "K") {
      const value = data.toString("utf8").replace(/\0+$/, "");
      if (type === "L") longName = value;
      else longLink = value;
      continue;
    }
    const prefix = text(345, 155);
    const rawName = pax.path ?? longName ?? (prefix ? `${prefix}/${text(0, 100)}` : text(0, 100));
    const linkname = pax.linkpath ?? longLink ?? text(157, 100);
    pax = {};
    longName = longLink = undefined;
    const path = normalisePath(rawName);
    const kind = { "0": "file", "7": "file", "1": "hardlink", "2": "symlink", "5": "dir" }[type] as
      TarEntryType | undefined;
    if (!kind) throw new Error(`tar: ${rawName}: entry type "${type}" (device, FIFO, …) is not supported`);
    if (!path) continue;
    const common = {
      path,
      type: kind,
      mode: number(100, 8) & 0o7777,
      uid: number(108, 8),
      gid: number(116, 8),
    };
    if (kind === "file") yield { ...common, data };
    else if (kind === "dir") yield common;
    else yield { ...common, linkname: kind === "hardlink" ? normalisePath(linkname) : linkname };
  }
}

function parsePax(data: Buffer): Record<string, string> {
  const records: Record<string, string> = {};
  let offset = 0;
  while (offset < data.length) {
    const space = data.indexOf(0x20, offset);
    const length = parseInt(data.subarray(offset, space).toString(), 10);
    if (space < 0 || !Number.isFinite(length) || length <= 0) throw new Error("tar: malformed PAX header");
    const record = data.subarray(space + 1, offset + length - 1).toString("utf8");
    const equals = record.indexOf("=");
    records[record.slice(0, equals)] = record.slice(equals + 1);
    offset += length;
  }
  return records;
}

/** "./usr/bin/" → "usr/bin"; "." and "/" → "". Refuses ".." components. */
export function normalisePath(raw: string): string {
  const parts = raw.split("/").filter((part) => part !== "" && part !== ".");
  if (parts.includes("..")) throw new Error(`tar: path "${raw}" leaves the layer`);
  return parts.join("/");
}
