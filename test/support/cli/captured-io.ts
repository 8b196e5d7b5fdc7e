import type { CliIO } from "../../../src/process/subcommand";

/*
 * A subcommand run in-process as the binary would run it: its argv, files from memory (one not
 * there fails as fs fails, ENOENT), stdin when given, and what it printed on stdout and stderr.
 * One place for every CLI test.
 */

export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
  /** The files it wrote (io.writeFile), by name; absent when none. */
  readonly written?: Readonly<Record<string, string>>;
}

/** A CliIO over `files` (and `stdin`), and the output it captured so far (the files it wrote in `written`). */
export function capturedIO(
  argv: readonly string[],
  files: Readonly<Record<string, string>> = {},
  stdin?: string,
): {
  readonly io: CliIO;
  readonly out: { stdout: string; stderr: string; written: Record<string, string> };
} {
  const out = { stdout: "", stderr: "", written: {} as Record<string, string> };
  const io: CliIO = {
    argv: [...argv],
    readFile: async (file) => {
      if (Object.hasOwn(files, file)) return files[file]!;
      throw Object.assign(new Error(`ENOENT: no such file or directory, open '${file}'`), { code: "ENOENT" });
    },
    ...(stdin !== undefined ? { readStdin: async () => stdin } : {}),
    writeFile: async (file, text) => {
      out.written[file] = text;
    },
    stdout: (t) => (out.stdout += t),
    stderr: (t) => (out.stderr += t),
  };
  return { io, out };
}

/** Runs `command` over capturedIO: its exit code and output. */
export async function runCaptured(
  command: (io: CliIO) => Promise<number>,
  argv: readonly string[],
  files?: Readonly<Record<string, string>>,
  stdin?: string,
): Promise<CliRun> {
  const { io, out } = capturedIO(argv, files, stdin);
  const code = await command(io);
  const { written, ...printed } = out;
  return { code, ...printed, ...(Object.keys(written).length ? { written } : {}) };
}
