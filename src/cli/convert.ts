import { convertLvmCluster, DEFAULT_NODE_SET_NAMESPACE, LVMS_API_VERSION } from "../migrate/lvms-v1";
import { parseCommandLine } from "./args";
import { readInput, nameOf } from "./input";
import { EXIT, exitCodeHelp, USAGE_EXIT } from "./exit-codes";
import type { CliIO } from "../process/subcommand";
import { readManifestDocuments } from "./manifest-documents";
import { outputFormat, toYaml, OUTPUT_FLAGS } from "./output";

/**
 * `pulumi-lvm convert FILE|-`: LVMS's LVMCluster objects (v1alpha1) as LVMNodeSets (v2alpha1) on
 * stdout; what is not carried over on stderr, by field path, with the reason (docs/migration.md).
 */
export const CONVERT_USAGE = `usage: pulumi-lvm convert [-o yaml|json] [--namespace <ns>] <file.yaml | ->

Reads the LVMCluster objects (${LVMS_API_VERSION}, LVMS) in the file (- for standard input; a
kubectl List counts as its items) and prints the LVMNodeSets that replace them. Each device class
keeps its name as volume group and device class, so its StorageClass stays lvms-<class>. Classes
with different node selectors become separate node sets that select disjoint nodes. Whatever has no
equivalent is listed on stderr: <file>: LVMCluster/<name>: <field path>: <reason>.

  -o, --output <format>  yaml (default): one document per LVMNodeSet; json: a kubectl List
  --namespace <ns>       the LVMNodeSets' namespace, the LvmSystem's (default ${DEFAULT_NODE_SET_NAMESPACE})

${exitCodeHelp(["OK", "INVALID", "USAGE"], {
  OK: "converted (check stderr for what was not carried over)",
  INVALID: "no LVMCluster in the input, or one that cannot be read or converted",
})}
`;

export async function run(io: CliIO): Promise<number> {
  const line = parseCommandLine(
    io.argv,
    { ...OUTPUT_FLAGS, namespace: { type: "string", value: "namespace" } },
    { positionals: true },
  );
  if (line.kind === "help") {
    io.stdout(CONVERT_USAGE);
    return EXIT.OK;
  }
  const usageError = (message: string) => {
    io.stderr(`pulumi-lvm convert: ${message}\n\n${CONVERT_USAGE}`);
    return USAGE_EXIT;
  };
  if (line.kind === "error") return usageError(line.message);
  if (line.positionals.length !== 1)
    return usageError(line.positionals.length ? "give one file" : "no file given");
  const output = outputFormat(line.values, "yaml", ["yaml", "json"]);
  if ("error" in output) return usageError(output.error);
  const namespace = line.values.namespace as string | undefined;

  const input = line.positionals[0]!;
  const file = nameOf(input);
  const text = await readInput(input, io);
  if (text === undefined) return EXIT.INVALID;
  const { documents, problems } = readManifestDocuments(file, text);
  const failures = [...problems];
  const nodeSets = [];
  const notes: string[] = [];
  let clusters = 0;
  for (const { where, value } of documents) {
    const kind = (value as { kind?: unknown } | null)?.kind;
    if (kind !== "LVMCluster") {
      notes.push(`${where}: skipped (${typeof kind === "string" ? kind : "no kind"}, not an LVMCluster)`);
      continue;
    }
    clusters++;
    const conversion = convertLvmCluster(value, namespace ? { namespace } : {});
    const subject = `${file}: LVMCluster/${String((value as { metadata?: { name?: unknown } }).metadata?.name ?? "(unnamed)")}`;
    if (!conversion.ok) {
      failures.push(...conversion.problems.map((p) => `${subject}: ${p.path}: ${p.message}`));
      continue;
    }
    nodeSets.push(...conversion.nodeSets);
    notes.push(...conversion.notConverted.map((n) => `${subject}: ${n.path}: ${n.reason}`));
  }
  if (clusters === 0 && failures.length === 0) failures.push(`${file}: has no LVMCluster documents`);
  for (const n of notes) io.stderr(`pulumi-lvm convert: ${n}\n`);
  if (failures.length) {
    for (const f of failures) io.stderr(`pulumi-lvm convert: ${f}\n`);
    return EXIT.INVALID;
  }
  io.stdout(
    output.format === "json"
      ? `${JSON.stringify({ apiVersion: "v1", kind: "List", items: nodeSets }, null, 2)}\n`
      : nodeSets.map((s) => `---\n${toYaml(s)}`).join(""),
  );
  return EXIT.OK;
}
