/*
 * What the agent writes to an lvm shell and how it reads the answer (lvm 2.03.16, Debian's build with
 * editline; docs/lvm-performance.md, "The lvm shell"). Checked by experiment on this machine:
 *
 * - editline prints no prompt on a pipe, so the end of a command cannot be read from stdout. With
 *   `log/report_command_log = 1` (only from a configuration file: `--config` refuses it) the shell
 *   writes, after each command, one JSON object to the fd in LVM_REPORT_FD: the command's report (its
 *   `"report"` section, formatted exactly as the same command prints it on stdout run by itself) and
 *   its command log (`"log"`), whose last entry is the shell's status of the command
 *   (`log_context` "shell", `log_object_type` "cmd", `log_type` "status"). That entry ends the answer.
 * - In a shell, `--reportformat` is ignored: the format is the configuration's `report/output_format`,
 *   so the shell's copy sets "json" and only commands asking for `--reportformat json` go through it.
 * - lvm's messages (errors, warnings, prints) go into the command log instead of stderr: a report
 *   whose log holds anything but its status, or that failed, is not answered from the shell (the
 *   runner re-runs it by itself, so its error carries lvm's own exit status and stderr). A write is
 *   never re-run: its output is rebuilt from the log as lvm prints it one-shot (writeOutput).
 * - A prompt ("... Wipe it? [y/n]: ") is the one thing lvm writes to stderr in the shell, and it reads
 *   the answer from the shell's stdin. The agent never answers yes (one-shot, stdin is closed: lvm
 *   takes "no" and fails); lvm asks before it changes anything, so a write that prompts is killed
 *   with the shell there and run one-shot (isPrompt).
 * - The shell splits a line at white space; a word that begins with ' or " runs to the next same
 *   quote, with no escapes; a word beginning with # ends the line; 64 words at most.
 */

/**
 * The settings the shell's lvm configuration adds to the synchronous-I/O copy, as `section/key` and
 * value as `lvm config` prints it. Only in the shell's own copy: in a one-shot command they would add
 * the command log to every report's output.
 */
export const LVM_SHELL_SETTINGS: ReadonlyMap<string, string> = new Map([
  ["log/report_command_log", "1"],
  // Only what the agent reads: the shell's status of each command (which ends its answer) and every
  // entry that is not a success (errors, warnings, prints, failed objects).
  ["log/command_log_selection", '"log_context=shell || log_type!=status || log_message!=success"'],
  ["log/command_log_sort", '"log_seq_num"'],
  [
    "log/command_log_cols",
    '"log_seq_num,log_type,log_context,log_object_type,log_object_name,log_message,log_ret_code"',
  ],
  ["report/output_format", '"json"'],
]);

/** The report commands that may run in the shell: reading only, and printing a JSON report. */
const SHELL_REPORTS = ["fullreport", "pvs", "vgs", "lvs"];
/**
 * The writing commands that may run in the shell when the agent is told to (--lvm-shell-writes): the
 * plan's steps but pvmove, which runs for minutes polling at --interval and would hold the shell.
 */
export const SHELL_WRITES = [
  "pvcreate",
  "vgcreate",
  "vgextend",
  "vgreduce",
  "pvremove",
  "pvchange",
  "lvcreate",
  "lvextend",
  "lvchange",
  "lvremove",
  "vgremove",
] as const;

/** A writing lvm command (the shell answers it with its output rebuilt from lvm's log). */
export function isShellWrite(tool: string | undefined): boolean {
  return (SHELL_WRITES as readonly string[]).includes(tool ?? "");
}

/** lvm_split's MAX_ARGS is 64, the command's name included; stay clear of it. */
const MAX_SHELL_WORDS = 60;

/**
 * Options a report may give in the shell, with whether each takes a value. Any other option keeps the
 * report one-shot: lvm's shell keeps some command-line state from one command to the next (checked:
 * after a report with `--devices`, a report without it sees no device at all), so only options
 * checked not to leak, or leaking identically into every command, are let through.
 */
const SHELL_OPTIONS = new Map([
  ["--reportformat", true],
  ["--units", true],
  ["--nosuffix", false],
  ["-o", true],
  ["--options", true],
  ["--devices", true],
]);

/**
 * Options a write may give in the shell: exactly those the plan's steps use (src/planner/argv.ts),
 * checked on lvm 2.03.16 to give in the shell what they give one-shot (test/agent/lvm-shell-writes.test.ts).
 * `--devices` is not one of them: the runner adds it, with exactly the agent's devices, to a confined
 * agent's writes in the shell (see shellRefusal).
 */
const SHELL_WRITE_OPTIONS = new Map([
  ["--addtag", true],
  ["--extents", true],
  ["--name", true],
  ["--type", true],
  ["--chunksize", true],
  ["--poolmetadatasize", true],
  ["--zero", true],
  ["--activate", true],
  ["--force", false],
]);

/** What the runner may send to its shell: reports always, the plan's writes when told to. */
export interface ShellScope {
  /**
   * The agent's devices (a confined agent: every lvm command gets a filter of exactly these), or
   * undefined (unconfined).
   */
  readonly devices: readonly string[] | undefined;
  /** Writes too (--lvm-shell-writes). @default false */
  readonly writes?: boolean;
}

/**
 * Why a command the runner was asked to run stays one process per command, or undefined when it may
 * run in the shell. One-shot: pvmove (runs for minutes, polling at --interval: it would hold the
 * shell), every other write unless the agent was told to run writes in the shell, a write with an
 * option not in SHELL_WRITE_OPTIONS, anything not a JSON report (the shell prints only its configured
 * format), a report with an option not in SHELL_OPTIONS, and the confined agent's unconfined `vgs`
 * (decided by the runner: it must not share a process whose device filter is the agent's).
 *
 * `--devices`, which lvm's shell keeps for the commands after (above), in a state in which a later
 * command without it sees no device at all: a confined agent's shell runs only reports naming
 * `--devices` with exactly the agent's devices, and the runner gives its writes the same `--devices`
 * (the devices its filter accepts: what lvm sees one-shot); an unconfined agent's shell runs only
 * commands without it.
 */
export function shellRefusal(argv: readonly string[], scope: ShellScope): string | undefined {
  const [tool, sub] = argv;
  if (isShellWrite(tool)) {
    if (!scope.writes) return `${tool} writes (writes run in the shell only with --lvm-shell-writes)`;
    return optionRefusal(argv.slice(1), SHELL_WRITE_OPTIONS);
  }
  const report = tool === "lvm" ? sub : tool;
  if (report === undefined || !SHELL_REPORTS.includes(report))
    return `${tool === "lvm" ? `lvm ${sub ?? ""}`.trim() : tool} is not a reading report`;
  const words = argv.slice(tool === "lvm" ? 2 : 1);
  const refused = optionRefusal(words, SHELL_OPTIONS);
  if (refused) return refused;
  const formats: string[] = [];
  const devices: string[] = [];
  for (let i = 0; i < words.length; i++) {
    if (words[i] === "--reportformat") formats.push(words[i + 1] ?? "");
    if (words[i] === "--devices") devices.push(words[i + 1] ?? "");
  }
  if (formats.length !== 1 || formats[0] !== "json")
    return "only reports asking for --reportformat json run in the shell (it prints JSON only)";
  if (!scope.devices)
    return devices.length
      ? "--devices would stay set in lvm's shell for the reports after this one"
      : undefined;
  if (devices.length !== 1 || devices[0] !== scope.devices.join(","))
    return "a confined agent's shell runs only reports naming --devices with exactly its devices (lvm's shell keeps --devices)";
  return undefined;
}

/** Why the first option in `words` not in `allowed` keeps the command one-shot; undefined when all are allowed. */
function optionRefusal(words: readonly string[], allowed: ReadonlyMap<string, boolean>): string | undefined {
  for (let i = 0; i < words.length; i++) {
    const w = words[i]!;
    if (!w.startsWith("-")) continue;
    const takesValue = allowed.get(w);
    if (takesValue === undefined) return `${w} is not an option known to be safe in a shared lvm process`;
    if (takesValue) i++;
  }
  return undefined;
}

/**
 * One line for the shell: every word quoted, so that white space, #, ! and ^ in a word (the device
 * filter has them) reach lvm as they are. Undefined when a word cannot be written so (both quote
 * characters, a control or non-ASCII character) or there are too many words: that command runs by itself.
 */
export function shellLine(words: readonly string[]): string | undefined {
  if (words.length > MAX_SHELL_WORDS) return undefined;
  const quoted: string[] = [];
  for (const w of words) {
    if (!/^[\x20-\x7e]*$/.test(w)) return undefined;
    if (!w.includes("'")) quoted.push(`'${w}'`);
    else if (!w.includes('"')) quoted.push(`"${w}"`);
    else return undefined;
  }
  return `${quoted.join(" ")}\n`;
}

/** One entry of the command log, as the shell prints it (the columns of LVM_SHELL_SETTINGS). */
export interface ShellLogEntry {
  readonly log_type?: string;
  readonly log_context?: string;
  readonly log_object_type?: string;
  readonly log_object_name?: string;
  readonly log_message?: string;
  readonly log_ret_code?: string;
}

/** A complete answer of the shell to one command. */
export interface ShellAnswer {
  /** lvm's return code of the command: 1 (ECMD_PROCESSED) is success; 5 ECMD_FAILED, 3 bad command line. */
  readonly retCode: number;
  /** The log entries other than the final status: messages lvm would have printed on stderr. */
  readonly messages: readonly ShellLogEntry[];
  /** The report as the same command prints it on stdout when run by itself; undefined when it printed none. */
  readonly report?: string;
}

const LOG_START = '\n      "log": [\n';
const REPORT_START = '  {\n      "report": [\n';
const REPORT_END = "\n      ]\n      ,";
/** What follows a report's last line when the command log comes after it. */
const LOG_SEPARATOR = "\n      ,";

/**
 * The answer in `text` (everything the shell wrote to the report fd since the command was written),
 * or undefined while it is incomplete. Called at each line "  }" (the end of a top-level object).
 */
export function parseShellAnswer(text: string): ShellAnswer | undefined {
  if (!text.endsWith("\n  }\n")) return undefined;
  const at = text.lastIndexOf(LOG_START);
  if (at < 0) return undefined;
  let log: unknown;
  try {
    log = (JSON.parse(`{${text.slice(at)}`) as { log?: unknown }).log;
  } catch {
    return undefined;
  }
  if (!Array.isArray(log) || log.length === 0) return undefined;
  const status = log[log.length - 1] as ShellLogEntry;
  if (status.log_context !== "shell" || status.log_object_type !== "cmd" || status.log_type !== "status")
    return undefined;
  const head = text.slice(0, at);
  const report =
    head.startsWith(REPORT_START) && head.endsWith(REPORT_END)
      ? `${head.slice(0, -LOG_SEPARATOR.length)}\n  }\n`
      : undefined;
  return {
    retCode: Number(status.log_ret_code),
    messages: log.slice(0, -1) as ShellLogEntry[],
    ...(report !== undefined ? { report } : {}),
  };
}

/** lvm's exit status for a return code (lvm2's tools: ECMD_PROCESSED 1 exits 0, the others as they are). */
export function exitStatusOf(retCode: number): number {
  return retCode === 1 ? 0 : retCode;
}

/**
 * A write's stdout and stderr as lvm prints them run by itself, from its answer in the shell: each
 * `print` entry is a line of stdout, each other entry (error, warn) a line of stderr, with the two
 * spaces lvm indents its messages by (checked against one-shot runs of the plan's writes, failing and
 * succeeding, in test/agent/lvm-shell-writes.test.ts). `extra`: what the command wrote to stderr itself.
 */
export function writeOutput(answer: ShellAnswer, extra = ""): { stdout: string; stderr: string } {
  let stdout = "";
  let stderr = extra;
  for (const m of answer.messages) {
    // Per-object statuses ("failure" of a volume group) are the log's own, never printed.
    if (m.log_type === "status") continue;
    const line = `  ${m.log_message ?? ""}\n`;
    if (m.log_type === "print") stdout += line;
    else stderr += line;
  }
  return { stdout, stderr };
}

/** lvm asking a yes/no question on stderr (it then waits for the answer on the shell's stdin). */
export function isPrompt(stderr: string): boolean {
  return /\[y\/n\]: $/.test(stderr);
}

/** lvm's return code for a command line it refused to parse: nothing ran. */
export const EINVALID_CMD_LINE = 3;
