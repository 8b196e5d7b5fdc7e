import { readManifestDocuments, duplicateNodeSetNames } from "./manifest-documents";
import { checkLVMNodeSet, GROUP_VERSION, type LVMNodeSet } from "../api";
import { InventoryParseError, parseNodeInventory } from "../inventory/parse";
import type { NodeInventory, RawNodeInventory } from "../inventory/types";
import {
  canonicalJson,
  DuplicateNodeError,
  formatPlanText,
  InventoryError,
  planNodes,
  PLAN_API_VERSION,
  recordedPlanOptions,
  type PlanOptions,
} from "../planner";
import { parseCommandLine } from "./args";
import { USAGE_EXIT, type CliIO } from "./io";

export const PLAN_USAGE = `usage: pulumi-lvm plan --inventory <inventory.json> --nodeset <nodeset.yaml> [--json]

Plans, without touching anything, what the node set (an LVMNodeSet, ${GROUP_VERSION}) would do on
the nodes of a recorded inventory ({"nodes": [{"name", "labels", "lsblk", "lvm", "signatures", ...}]}):
per node the devices each volume group claims, the devices it excludes and why, the exact commands
in order, what is blocked, and the plan's hash.

  --inventory <file>   recorded node inventories (JSON)
  --nodeset <file>     the LVMNodeSet (YAML; several in one file plan one fleet together)
  --json               print the plan document (${PLAN_API_VERSION}, docs/plan-format.md)

Exit code 0 when a plan was printed, 1 for an invalid node set or inventory, 2 for bad arguments.
`;

/**
 * `pulumi-lvm plan`: reads node sets and recorded inventories, prints the plan (text, or the
 * PlanDocument as JSON with --json). Invalid input prints its problems on stderr, with the field
 * path, and nothing on stdout.
 */
export async function runPlan(io: CliIO): Promise<number> {
  const args = parseArgs(io.argv[0] === "plan" ? io.argv.slice(1) : io.argv);
  if (args.kind === "help") {
    io.stdout(PLAN_USAGE);
    return 0;
  }
  if (args.kind === "error") {
    io.stderr(`pulumi-lvm plan: ${args.message}\n\n${PLAN_USAGE}`);
    return USAGE_EXIT;
  }
  const nodeSets = await readNodeSets(args.nodeset, io);
  const recorded = nodeSets && (await readInventory(args.inventory, io));
  if (!nodeSets || !recorded) return 1;
  let doc;
  try {
    doc = planNodes(recorded.nodes, nodeSets.length === 1 ? nodeSets[0]! : nodeSets, {
      optionsFor: (node) => recorded.options.get(node) ?? {},
    });
  } catch (error) {
    if (!(error instanceof InventoryError) && !(error instanceof DuplicateNodeError)) throw error;
    io.stderr(`${args.inventory}: ${error.message}\n`);
    return 1;
  }
  // --json: the canonical JSON (sorted keys, as the hashes are computed over), indented; written
  // directly, not parsed back from the compact text (60 MB of it for 5,000 nodes × 24 devices).
  io.stdout(args.json ? `${canonicalJson(doc, 2)}\n` : formatPlanText(doc));
  return 0;
}

/** The Subcommand entry point (src/cli/main.ts). */
export const run = runPlan;

type Args =
  | { kind: "run"; inventory: string; nodeset: string; json: boolean }
  | { kind: "help" }
  | { kind: "error"; message: string };

function parseArgs(argv: readonly string[]): Args {
  const line = parseCommandLine(argv, {
    inventory: { type: "string", value: "file" },
    nodeset: { type: "string", value: "file" },
    json: { type: "boolean" },
  });
  if (line.kind !== "run") return line;
  const { inventory, nodeset, json } = line.values as {
    inventory?: string;
    nodeset?: string;
    json?: boolean;
  };
  if (!inventory) return { kind: "error", message: "--inventory is required" };
  if (!nodeset) return { kind: "error", message: "--nodeset is required" };
  return { kind: "run", inventory, nodeset, json: json === true };
}

async function readText(file: string, io: CliIO): Promise<string | undefined> {
  try {
    return await io.readFile(file);
  } catch (error) {
    const e = error as NodeJS.ErrnoException;
    io.stderr(`${file}: cannot read it: ${e.code === "ENOENT" ? "no such file" : e.message}\n`);
    return undefined;
  }
}

/**
 * The file's LVMNodeSets, validated (other documents are ignored). Problems go to stderr as
 * `<file>: LVMNodeSet/<name>: <path>: <message>`, every one of every set.
 */
async function readNodeSets(file: string, io: CliIO): Promise<LVMNodeSet[] | undefined> {
  const text = await readText(file, io);
  if (text === undefined) return undefined;
  const { documents, problems: unreadable } = readManifestDocuments(file, text);
  const sets = documents.filter((d) => (d.value as { kind?: unknown } | null)?.kind === "LVMNodeSet");
  const duplicates = duplicateNodeSetNames(sets);
  if (unreadable.length || duplicates.length) {
    io.stderr([...unreadable, ...duplicates].map((l) => `${l}\n`).join(""));
    return undefined;
  }
  if (sets.length === 0) {
    io.stderr(`${file}: no LVMNodeSet document in it\n`);
    return undefined;
  }
  const valid: LVMNodeSet[] = [];
  const problems: string[] = [];
  for (const { value: input } of sets) {
    const checked = checkLVMNodeSet(input);
    if (checked.ok) {
      valid.push(checked.value);
      continue;
    }
    const name = (input as { metadata?: { name?: unknown } }).metadata?.name;
    const who = `LVMNodeSet/${typeof name === "string" && name ? name : "(unnamed)"}`;
    problems.push(...checked.problems.map((p) => `${file}: ${who}: ${p.path}: ${p.message}\n`));
  }
  if (problems.length) {
    io.stderr(problems.join(""));
    return undefined;
  }
  return valid;
}

/** The file's nodes, parsed, and the agent's plan options each recorded (--agent-state-dir). */
async function readInventory(
  file: string,
  io: CliIO,
): Promise<{ nodes: NodeInventory[]; options: Map<string, PlanOptions> } | undefined> {
  const text = await readText(file, io);
  if (text === undefined) return undefined;
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (error) {
    io.stderr(`${file}: not JSON: ${(error as Error).message}\n`);
    return undefined;
  }
  const nodes = (raw as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes)) {
    io.stderr(`${file}: expected {"nodes": [...]} with one raw inventory per node\n`);
    return undefined;
  }
  try {
    const raw = nodes as RawNodeInventory[];
    return {
      nodes: raw.map((n) => parseNodeInventory(n)),
      options: new Map(raw.map((n) => [n.name, recordedPlanOptions(n)])),
    };
  } catch (error) {
    if (!(error instanceof InventoryParseError)) throw error;
    io.stderr(`${file}: ${error.message}\n`);
    return undefined;
  }
}
