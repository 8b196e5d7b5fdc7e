import { GROUP_VERSION } from "../api/lvmnodeset";
import { checkManifest, problemLine } from "../api/validate";
import { parseCommandLine } from "./args";
import { USAGE_EXIT, type CliIO } from "./io";
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
export const VALIDATE_USAGE = `usage: pulumi-lvm validate [--verbose] <file.yaml>...

Checks the LVMNodeSet and LVMNode objects (${GROUP_VERSION}) in the YAML files and prints
one line per problem: <file>: <kind>/<name>: <field path>: <message>.
Exit code 0 when all are valid, 1 when there are problems, 2 for bad arguments.

  -v, --verbose   also list skipped documents and valid objects on stderr
`;

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
  let failed = false;
  const seen = new Map<string, string>();
  for (const file of args.files) {
    const problems = await validateFile(file, io, args.verbose, seen);
    for (const line of problems) io.stdout(`${line}\n`);
    if (problems.length) failed = true;
  }
  return failed ? 1 : 0;
}

/** The problem lines of one file; progress notes go to stderr when verbose. */
export async function validateFile(
  file: string,
  io: Pick<CliIO, "readFile" | "stderr">,
  verbose: boolean,
  /** LVMNodeSet names of the files before this one → where (names must be unique across files). */
  seen: Map<string, string> = new Map(),
): Promise<string[]> {
  let text: string;
  try {
    text = await io.readFile(file);
  } catch (error) {
    return [`${file}: cannot read it: ${readError(error)}`];
  }
  const { documents, problems } = readManifestDocuments(file, text);
  const lines: string[] = [...problems];
  let ours = 0;
  for (const { where, value } of documents) {
    if (!isOurs(value)) {
      if (verbose) io.stderr(`${where}: skipped (${describeDocument(value)})\n`);
      continue;
    }
    ours++;
    const { name, problems } = checkManifest(value);
    const kind = typeof value.kind === "string" && value.kind ? value.kind : "(no kind)";
    for (const p of problems) lines.push(`${file}: ${problemLine(kind, name, p)}`);
    if (verbose && problems.length === 0) io.stderr(`${file}: ${kind}/${name}: valid\n`);
  }
  lines.push(...duplicateNodeSetNames(documents, seen));
  if (ours === 0 && lines.length === 0) lines.push(`${file}: has no LVMNodeSet or LVMNode documents`);
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

type Args = { files: readonly string[]; verbose: boolean } | { error: string };

function parseArgs(argv: readonly string[]): Args {
  const line = parseCommandLine(argv, { verbose: { type: "boolean", short: "v" } }, { positionals: true });
  if (line.kind === "help") return { error: "" };
  if (line.kind === "error") return { error: line.message };
  if (line.positionals.length === 0) return { error: "no files given" };
  return { files: line.positionals, verbose: line.values.verbose === true };
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
