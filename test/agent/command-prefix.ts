/**
 * Test-only command prefixes (`--command-prefix`) that hold one lvm command up: before it runs (a
 * stall, a hang) or after it ran and before the agent learns its outcome (a crash between a write and
 * its journal record). The same prefix works whichever way the agent runs the command:
 *
 * - by itself: the prefix is run with the command's argv;
 * - in the agent's lvm shell (--lvm-shell-writes): the prefix is run with the one word `lvm`; it then
 *   sits between the agent and lvm, reading each command line from the agent (`before` runs ahead of
 *   the matching line) and each answer lvm writes to LVM_REPORT_FD (`after` runs ahead of the
 *   matching command's answer, which the agent gets only then).
 *
 * Either way everything it starts is in the command's (or the shell's) process group, so the agent's
 * timeout kills it with the command.
 */
import * as fs from "node:fs";
import { LVM_SHELL_ENV } from "./agent-process";
import { commandLogLines } from "./command-log-reader";

export interface HoldUp {
  /** The command held up: its tool (argv[0]), e.g. "vgcreate". */
  readonly tool: string;
  /** Only when its last word is this (e.g. a device). @default any */
  readonly lastArg?: string;
  /** Shell code run before the command runs. @default none */
  readonly before?: string;
  /** Shell code run after the command ran, before the agent sees its outcome (`exit` ends it there). @default none */
  readonly after?: string;
  /** What the prefix is for, for a person reading it. */
  readonly comment: string;
}

/** Writes the prefix script to `file` (mode 0755). */
export function writeHoldUpPrefix(file: string, h: HoldUp): void {
  const last = h.lastArg ?? "";
  const matchedNext = `${file}.next-answer-matches`;
  fs.writeFileSync(
    file,
    [
      "#!/bin/bash",
      `# test-only command prefix (test/agent/command-prefix.ts): ${h.comment}`,
      `before() { :; ${h.before ?? ""}\n}`,
      `after() { :; ${h.after ?? ""}\n}`,
      'if [ "$#" -ne 1 ] || [ "$1" != lvm ]; then',
      `  if [ "$1" = ${h.tool} ] && { [ -z "${last}" ] || [ "\${@: -1}" = "${last}" ]; }; then`,
      '    before; "$@"; rc=$?; after; exit $rc',
      "  fi",
      '  exec "$@"',
      "fi",
      "# The agent's lvm shell: command lines on stdin, answers on fd 3 (LVM_REPORT_FD).",
      `rm -f ${matchedNext}`,
      "exec 4>&3",
      "while IFS= read -r line; do",
      `  if [[ "$line" == "'${h.tool}' "* ]] && { [ -z "${last}" ] || [[ "$line" == *" '${last}'" ]]; }; then`,
      `    : > ${matchedNext}; before`,
      "  fi",
      '  printf "%s\\n" "$line"',
      "done | lvm 3> >(",
      '  answer=""',
      "  while IFS= read -r l; do",
      `    answer+="$l"$'\\n'`,
      '    [ "$l" = "  }" ] || continue',
      `    if [ -e ${matchedNext} ] && [[ "$answer" == *'"log_context":"shell"'* ]]; then rm -f ${matchedNext}; after; fi`,
      '    printf "%s" "$answer" >&4; answer=""',
      "  done",
      ")",
      "",
    ].join("\n"),
    { mode: 0o755 },
  );
}

/** How each run of `tool` was started, in the order of an agent's --command-log: in its lvm shell or by itself. */
export function startedVia(commandLogFile: string, tool: string): Array<"shell" | "one-shot"> {
  return commandLogLines(commandLogFile)
    .filter((l) => l.event === "start" && l.requested[0] === tool)
    .map((l) => ((l as { via?: string }).via === "shell" ? "shell" : "one-shot"));
}

/** How this run's agents run their writes: in the lvm shell with PULUMI_LVM_TEST_LVM_SHELL=writes. */
export function writesVia(): "shell" | "one-shot" {
  return process.env[LVM_SHELL_ENV] === "writes" ? "shell" : "one-shot";
}
