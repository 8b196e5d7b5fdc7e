/**
 * What a subcommand of the `pulumi-lvm` binary gets from the outside world, passed in so tests can
 * substitute it: its arguments, a way to read files, and the two output streams.
 */
export interface CliIO {
  /** The arguments after the subcommand's name. */
  readonly argv: readonly string[];
  /** Reads a file as UTF-8; rejects with a Node.js error (with `code`) when it cannot. */
  readFile(file: string): Promise<string>;
  /**
   * Reads standard input to its end as UTF-8, for a file argument given as `-`.
   * @default standard input is not available: `-` is a usage error
   */
  readStdin?(): Promise<string>;
  /**
   * Writes a file the user named (UTF-8), replacing it; rejects with a Node.js error when it cannot.
   * @default fs.writeFile
   */
  writeFile?(file: string, text: string): Promise<void>;
  /** Writes to standard output (the caller adds newlines). */
  stdout(text: string): void;
  /** Writes to standard error (the caller adds newlines). */
  stderr(text: string): void;
  /**
   * Aborts at SIGTERM/SIGINT. main() sets it for the commands that run until stopped (agent,
   * operator), catching the signals before the subcommand's module loads (stop-signal.ts says why).
   * @default the subcommand catches the signals itself
   */
  readonly stopSignal?: AbortSignal;
}

/** A subcommand module exports `run`, which returns the process exit code. */
export interface Subcommand {
  run(io: CliIO): Promise<number>;
}
