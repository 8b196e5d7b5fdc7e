import { GROUP_VERSION } from "../api/lvmnodeset";
import { checkManifest } from "../api/validate";
import { parseCommandLine } from "./args";
import { EXIT, exitCodeHelp, USAGE_EXIT } from "./exit-codes";
import type { CliIO } from "../process/subcommand";
import { OUTPUT_FLAGS, outputFormat, toYaml, type OutputFormat } from "./output";
import { nameOf } from "./input";

/** The apiVersion of validate's JSON/YAML document. */
export const VALIDATE_API_VERSION = "pulumi-lvm.dev/validate/v1";
import { duplicateNodeSetNames, readManifestDocuments } from "./manifest-documents";

/**
 * `pulumi-lvm validate [--verbose] <file.yaml>...`: checks every LVMNodeSet and LVMNode in the files
 * (multi-document YAML) with the same rules as the library and the CRDs, and prints one line per
 * problem on stdout:
 *
 *   nodes.yaml: LVMNodeSet/my-set: spec.template.deviceClasses[1].thin.sizePercent: must be between 1 and 100 (got 120)
 *
 * Files that cannot be read or parsed give `<file>: <message>`. Documents of other kinds are skipped
 * (listed on stderr with --verbose); a file without any LVMNodeSet or LVMNode is an error, since it
 * was most likely given by mistake. Exit code 0: everything valid; 1: problems; 2: bad arguments.
 */
export const VALIDATE_USAGE = `usage: pulumi-lvm validate [--verbose] [-o text|json|yaml] <file.yaml>...

Checks the LVMNodeSet and LVMNode objects (${GROUP_VERSION}) in the YAML files (- for
standard input) and prints one line per problem: <file>: <kind>/<name>: <field path>: <message>.

  -v, --verbose          also list skipped documents and valid objects on stderr
  -o, --output <format>  text (default): one line per problem; json, yaml: a document
                         {apiVersion: ${VALIDATE_API_VERSION}, valid, problems: [{file, object, path, message}]}
  --json                 the same as -o json

${exitCodeHelp(["OK", "INVALID", "USAGE"], { OK: "every object is valid", INVALID: "there are problems" })}
`;

/** One problem of `validate`, as -o json/yaml prints it; `object` and `path` when known. */
export interface FileProblem {
  /** The file as given, or "<stdin>". */
  readonly file: string;
  /** "<kind>/<name>", e.g. "LVMNodeSet/my-set". */
  readonly object?: string;
  /** The field path, e.g. "spec.template.deviceClasses[1].thin.sizePercent". */
  readonly path?: string;
  readonly message: string;
}

export async function run(io: CliIO): Promise<number> {
  const args = parseArgs(io.argv);
  if ("error" in args) {
    if (args.error) io.stderr(`pulumi-lvm validate: ${args.error}\n\n${VALIDATE_USAGE}`);
    else {
      io.stdout(VALIDATE_USAGE);
      return 0;
    }
    return USAGE_EXIT;
  }
  const all: FileProblem[] = [];
  const seen = new Map<string, string>();
  for (const file of args.files) {
    const problems = await validateFileProblems(file, io, args.verbose, seen);
    if (args.format === "text") for (const p of problems) io.stdout(`${problemText(p)}\n`);
    all.push(...problems);
  }
  if (args.format === "json" || args.format === "yaml") {
    const doc = { apiVersion: VALIDATE_API_VERSION, valid: all.length === 0, problems: all };
    io.stdout(args.format === "json" ? `${JSON.stringify(doc, null, 2)}\n` : toYaml(doc));
  }
  return all.length ? EXIT.INVALID : EXIT.OK;
}

/** "<file>: <kind>/<name>: <path>: <message>", the parts it has. */
export function problemText(p: FileProblem): string {
  return [p.file, p.object, p.path, p.message].filter((part) => part !== undefined).join(": ");
}

/** The problem lines of one file; progress notes go to stderr when verbose. */
export async function validateFile(
  file: string,
  io: Pick<CliIO, "readFile" | "readStdin" | "stderr">,
  verbose: boolean,
  /** LVMNodeSet names of the files before this one → where (names must be unique across files). */
  seen: Map<string, string> = new Map(),
): Promise<string[]> {
  return (await validateFileProblems(file, io, verbose, seen)).map(problemText);
}

/** The problems of one file (`-` is standard input); progress notes go to stderr when verbose. */
export async function validateFileProblems(
  input: string,
  io: Pick<CliIO, "readFile" | "readStdin" | "stderr">,
  verbose: boolean,
  seen: Map<string, string> = new Map(),
): Promise<FileProblem[]> {
  const file = nameOf(input);
  let text: string;
  try {
    if (input !== "-") text = await io.readFile(input);
    else if (io.readStdin) text = await io.readStdin();
    else throw new Error("standard input is not available");
  } catch (error) {
    return [{ file, message: `cannot read it: ${readError(error)}` }];
  }
  const { documents, problems: unreadable } = readManifestDocuments(file, text);
  // Lines made elsewhere start with "<file>: "; the rest is the message.
  const fromLine = (line: string): FileProblem => ({ file, message: line.slice(file.length + 2) });
  const lines: FileProblem[] = unreadable.map(fromLine);
  let ours = 0;
  for (const { where, value } of documents) {
    if (!isOurs(value)) {
      if (verbose) io.stderr(`${where}: skipped (${describeDocument(value)})\n`);
      continue;
    }
    ours++;
    const { name, problems } = checkManifest(value);
    const kind = typeof value.kind === "string" && value.kind ? value.kind : "(no kind)";
    for (const p of problems)
      lines.push({ file, object: `${kind}/${name}`, path: p.path, message: p.message });
    if (verbose && problems.length === 0) io.stderr(`${file}: ${kind}/${name}: valid\n`);
  }
  lines.push(...duplicateNodeSetNames(documents, seen).map(fromLine));
  if (ours === 0 && lines.length === 0)
    lines.push({ file, message: "has no LVMNodeSet or LVMNode documents" });
  return lines;
}

/**
 * A document is ours when its kind is one of ours (whatever apiVersion it names: a wrong one is a
 * problem to report) or its apiVersion is ours (whatever kind: a misspelt kind is a problem too).
 * Other kinds of the lvm.topolvm.io group, such as v1alpha1 LVMCluster, are not.
 */
export function isOurs(value: unknown): value is { apiVersion?: unknown; kind?: unknown } {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const { apiVersion, kind } = value as { apiVersion?: unknown; kind?: unknown };
  return kind === "LVMNodeSet" || kind === "LVMNode" || apiVersion === GROUP_VERSION;
}

/* ------------------------------------------------------------------------------- helpers ---- */

type Args = { files: readonly string[]; verbose: boolean; format: OutputFormat } | { error: string };

function parseArgs(argv: readonly string[]): Args {
  const line = parseCommandLine(
    argv,
    { verbose: { type: "boolean", short: "v" }, ...OUTPUT_FLAGS },
    { positionals: true },
  );
  if (line.kind === "help") return { error: "" };
  if (line.kind === "error") return { error: line.message };
  if (line.positionals.length === 0) return { error: "no files given" };
  if (line.positionals.filter((f) => f === "-").length > 1)
    return { error: "only one file can be - (standard input)" };
  const output = outputFormat(line.values, "text", ["text", "json", "yaml"]);
  if ("error" in output) return { error: output.error };
  return { files: line.positionals, verbose: line.values.verbose === true, format: output.format };
}

function readError(error: unknown): string {
  const code = (error as { code?: unknown } | undefined)?.code;
  if (code === "ENOENT") return "no such file";
  if (code === "EISDIR") return "is a directory";
  if (code === "EACCES") return "permission denied";
  return error instanceof Error ? error.message : String(error);
}

function describeDocument(value: unknown): string {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return `not an object`;
  const { apiVersion, kind } = value as { apiVersion?: unknown; kind?: unknown };
  return `${typeof kind === "string" ? kind : "no kind"}, ${typeof apiVersion === "string" ? apiVersion : "no apiVersion"}`;
}
