/**
 * The exit codes of the read commands (plan, inventory, validate, convert), one meaning each, for pipelines
 * (docs/cli.md, Exit codes). `CHANGES` only with `plan --detailed-exitcode`, as Terraform's
 * `plan -detailed-exitcode` (whose 2 is our usage error, hence 4).
 */
export const EXIT = {
  /** Nothing to do, or all fine. */
  OK: 0,
  /** Invalid input: a file that cannot be read or is not valid, discovery that failed. */
  INVALID: 1,
  /** A command line that cannot be understood. */
  USAGE: 2,
  /** Something is blocked, or a node set selects no node. */
  BLOCKED: 3,
  /** The plan has changes (plan --detailed-exitcode). */
  CHANGES: 4,
} as const;

/** The exit-code table as each read command's --help ends it. */
export function exitCodeHelp(
  codes: ReadonlyArray<keyof typeof EXIT>,
  meanings: Partial<Record<keyof typeof EXIT, string>> = {},
): string {
  const defaults: Record<keyof typeof EXIT, string> = {
    OK: "nothing to do, or all fine",
    INVALID: "invalid input (nothing is printed on stdout)",
    USAGE: "usage error (bad arguments)",
    BLOCKED: "something is blocked, or a node set selects no node",
    CHANGES: "the plan has changes (only with --detailed-exitcode)",
  };
  return ["exit codes:", ...codes.map((c) => `  ${EXIT[c]}  ${meanings[c] ?? defaults[c]}`)].join("\n");
}

/** Exit code for a command line that cannot be understood (as for `--help`). */
export const USAGE_EXIT = EXIT.USAGE;
