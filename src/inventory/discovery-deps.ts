/*
 * What discovery (src/inventory/discover.ts, ./probe.ts) needs from the machine, and how it reads
 * what the commands it runs say: their JSON, their exit status.
 */

/** What discovery needs from the machine; tests pass fakes. */
export interface DiscoveryDeps {
  /**
   * Runs a program (argv, never a shell string) with LC_ALL=C and resolves with its stdout when it exits 0.
   * Otherwise rejects with an Error whose `exitCode` (or, as from execFile, `code`) is the exit status,
   * or `code: "ENOENT"` when the program is not installed; the message should carry stderr.
   */
  run(argv: readonly string[]): Promise<{ stdout: string }>;
  /** A file's content, or undefined when it does not exist. */
  readFile(path: string): Promise<string | undefined>;
  /** A binary file's bytes (a SCSI VPD page), or undefined when it does not exist or cannot be read. */
  readBytes(path: string): Promise<Uint8Array | undefined>;
  /** A directory's entry names, or undefined when it does not exist. */
  readdir(path: string): Promise<readonly string[] | undefined>;
  /** A symlink's target as stored, or undefined when the path is not a symlink. */
  readlink(path: string): Promise<string | undefined>;
  /**
   * What a path is and when it last changed (lstat's answer, following no link), or undefined when it
   * does not exist or cannot be read. Only the discovery cache (./probe-cache.ts) asks; without it
   * nothing is cached.
   */
  stamp?(path: string): Promise<FileStamp | undefined>;
}

/** A file's identity and change times, as the discovery cache keys on them (nanoseconds, as text). */
export interface FileStamp {
  readonly type: "file" | "block-device" | "other";
  readonly ino: string;
  readonly size: string;
  readonly mtimeNs: string;
  readonly ctimeNs: string;
}

export async function runJson(deps: DiscoveryDeps, argv: readonly string[]): Promise<unknown> {
  const { stdout } = await deps.run(argv);
  try {
    return JSON.parse(stdout);
  } catch (err) {
    throw new Error(`${argv.join(" ")}: printed something that is not JSON: ${(err as Error).message}`);
  }
}

/** The exit status of a failed run (`exitCode`, or execFile's `code`), or "ENOENT". */
export function exitStatus(err: unknown): number | string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as { exitCode?: unknown; code?: unknown };
  const status = e.exitCode ?? e.code;
  return typeof status === "number" || typeof status === "string" ? status : undefined;
}
