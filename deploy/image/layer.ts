/**
 * What goes into one image layer: sources (directories, tar streams, single files, explicit entries)
 * merged into one sorted, normalised entry list that writeTar (tar.ts) turns into the same bytes
 * every time.
 *
 * Interface (stable):
 *   collectLayer(sources, options?) → TarEntry[]
 *     - later sources override earlier ones at the same path (a directory over a directory merges);
 *     - every missing parent directory is added (0755);
 *     - owners are normalised to 0:0 unless `options.owner(path)` says otherwise;
 *     - setuid/setgid bits are dropped unless `options.keepSetuid`;
 *     - `options.exclude(path)` drops a path (and, for a directory, what is under it);
 *     - files with the same inode (directories) or hardlinks (tar streams) become hardlinks to the
 *       first path in sorted order.
 */
import { lstat, readdir, readlink } from "node:fs/promises";
import { createReadStream } from "node:fs";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { normalisePath, readTar, type TarEntry } from "./tar";

export type LayerSource =
  /** A directory's contents, placed under `to` (default the root). */
  | { readonly dir: string; readonly to?: string }
  /** A tar file or stream's entries, placed under `to`. */
  | { readonly tar: string | Readable; readonly to?: string }
  /** One file of this machine at `to`, with `mode` (default: the file's own). */
  | { readonly file: string; readonly to: string; readonly mode?: number }
  /** Entries as they are (paths relative to the root). */
  | { readonly entries: readonly TarEntry[] };

export interface LayerOptions {
  /** Drop a path (and what is under it). @default keep everything */
  readonly exclude?: (path: string) => boolean;
  /** Owner of a path. @default 0:0 for every path */
  readonly owner?: (path: string) => { readonly uid: number; readonly gid: number } | undefined;
  /** Keep setuid/setgid bits. @default false: a container needs none of them */
  readonly keepSetuid?: boolean;
}

type Collected = TarEntry & { readonly inode?: string };

/** Merges sources into the sorted entry list of one layer (see the file comment). */
export async function collectLayer(
  sources: readonly LayerSource[],
  options: LayerOptions = {},
): Promise<TarEntry[]> {
  const byPath = new Map<string, Collected>();
  const add = (entry: Collected) => {
    const existing = byPath.get(entry.path);
    if (existing?.type === "dir" && entry.type !== "dir")
      for (const path of byPath.keys())
        if (path.startsWith(`${entry.path}/`))
          throw new Error(
            `layer: ${entry.path} is a directory with contents and cannot become a ${entry.type}`,
          );
    byPath.set(entry.path, entry);
  };
  for (const source of sources) {
    if ("dir" in source) for (const entry of await walk(source.dir, under(source.to))) add(entry);
    else if ("tar" in source) {
      const stream = typeof source.tar === "string" ? createReadStream(source.tar) : source.tar;
      const prefix = under(source.to);
      for await (const entry of readTar(stream))
        add({
          ...entry,
          path: join2(prefix, entry.path),
          ...(entry.type === "hardlink" ? { linkname: join2(prefix, entry.linkname!) } : {}),
        });
    } else if ("file" in source) {
      const stat = await lstat(source.file);
      if (!stat.isFile()) throw new Error(`layer: ${source.file} is not a regular file`);
      add({
        path: under(source.to),
        type: "file",
        mode: source.mode ?? stat.mode & 0o7777,
        source: { file: source.file, size: stat.size },
      });
    } else for (const entry of source.entries) add({ ...entry, path: normalisePath(entry.path) });
  }
  return finish(byPath, options);
}

function under(to: string | undefined): string {
  return normalisePath(to ?? "");
}

function join2(prefix: string, path: string): string {
  return prefix ? (path ? `${prefix}/${path}` : prefix) : path;
}

async function walk(dir: string, prefix: string): Promise<Collected[]> {
  const out: Collected[] = [];
  const visit = async (hostPath: string, path: string) => {
    for (const name of await readdir(hostPath)) {
      const child = join(hostPath, name);
      const childPath = join2(path, name);
      const stat = await lstat(child);
      const mode = stat.mode & 0o7777;
      const owner = { uid: stat.uid, gid: stat.gid };
      if (stat.isDirectory()) {
        out.push({ path: childPath, type: "dir", mode, ...owner });
        await visit(child, childPath);
      } else if (stat.isSymbolicLink())
        out.push({
          path: childPath,
          type: "symlink",
          mode: 0o777,
          linkname: await readlink(child),
          ...owner,
        });
      else if (stat.isFile())
        out.push({
          path: childPath,
          type: "file",
          mode,
          ...owner,
          source: { file: child, size: stat.size },
          ...(stat.nlink > 1 ? { inode: `${stat.dev}:${stat.ino}` } : {}),
        });
      else throw new Error(`layer: ${child}: sockets, devices and FIFOs are not supported`);
    }
  };
  await visit(dir, prefix);
  return out;
}

function finish(byPath: Map<string, Collected>, options: LayerOptions): TarEntry[] {
  const excluded = (path: string) => {
    if (!options.exclude) return false;
    const parts = path.split("/");
    for (let i = 1; i <= parts.length; i++) if (options.exclude(parts.slice(0, i).join("/"))) return true;
    return false;
  };
  const kept = new Map<string, Collected>();
  for (const [path, entry] of byPath) if (!excluded(path)) kept.set(path, entry);
  for (const path of [...kept.keys()]) {
    const parts = path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const parent = parts.slice(0, i).join("/");
      const existing = kept.get(parent);
      if (!existing) kept.set(parent, { path: parent, type: "dir", mode: 0o755 });
      else if (existing.type !== "dir")
        throw new Error(`layer: ${path} is under ${parent}, a ${existing.type}`);
    }
  }
  const firstOfInode = new Map<string, string>();
  const out: TarEntry[] = [];
  for (const path of [...kept.keys()].sort(byBytes)) {
    const { inode, ...entry } = kept.get(path)!;
    const owner = options.owner?.(path) ?? { uid: 0, gid: 0 };
    const mode = options.keepSetuid ? entry.mode : entry.mode & ~0o6000;
    let normal: TarEntry = { ...entry, ...owner, mode };
    if (inode) {
      const first = firstOfInode.get(inode);
      if (first) normal = { path, type: "hardlink", mode, ...owner, linkname: first };
      else firstOfInode.set(inode, path);
    }
    if (normal.type === "hardlink") normal = resolveHardlink(normal, kept, out);
    out.push(normal);
  }
  return out;
}

/** A hardlink whose target was excluded or comes later becomes a copy of the target's contents. */
function resolveHardlink(entry: TarEntry, kept: Map<string, Collected>, before: TarEntry[]): TarEntry {
  const target = entry.linkname!;
  if (before.some((written) => written.path === target && written.type === "file")) return entry;
  const original = kept.get(target);
  if (!original || original.type !== "file")
    throw new Error(`layer: hardlink ${entry.path} → ${target}: the target is not a file in this layer`);
  const { path: _path, type: _type, linkname: _linkname, ...rest } = entry;
  return { ...rest, path: entry.path, type: "file", ...contents(original) };
}

function contents(entry: TarEntry): Pick<TarEntry, "data" | "source"> {
  return entry.data ? { data: entry.data } : { source: entry.source! };
}

/** Sorting by UTF-8 bytes: the same order on every machine and locale. */
function byBytes(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a), Buffer.from(b));
}
