import type { CliIO } from "../process/subcommand";

/** How `-` (standard input) is named in messages. */
export const STDIN_NAME = "<stdin>";

/** A file's text, or standard input's for `-`; a file that cannot be read is reported on stderr. */
export async function readInput(file: string, io: CliIO): Promise<string | undefined> {
  try {
    if (file !== "-") return await io.readFile(file);
    if (!io.readStdin) throw new Error("standard input is not available");
    return await io.readStdin();
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    io.stderr(
      `${nameOf(file)}: cannot read it: ${e.code === "ENOENT" ? "no such file" : e.code === "EISDIR" ? "is a directory" : e.message}\n`,
    );
    return undefined;
  }
}

export function nameOf(file: string): string {
  return file === "-" ? STDIN_NAME : file;
}
