import { GROUP_VERSION } from "../api";
import {
  canonicalJson,
  DuplicateNodeError,
  formatPlanText,
  InventoryError,
  planNodes,
  PLAN_API_VERSION,
  type PlanDocument,
} from "../planner";
import { parseCommandLine } from "./args";
import { EXIT, exitCodeHelp, USAGE_EXIT } from "./exit-codes";
import type { CliIO } from "../process/subcommand";
import { OUTPUT_FLAGS, outputFormat, toYaml, type OutputFormat } from "./output";
import { missLine, overlapLines, planExitCode, selectorMisses, setsSelectingNoNode } from "./plan-checks";
import { readInventories, readNodeSets } from "./plan-input";
import { formatPlanWide } from "./plan-wide";
import { planMap } from "./html/plan-map";
import { writePage } from "./html/write-page";

export const PLAN_USAGE = `usage: pulumi-lvm plan --inventory <inventory.json>... -f <nodeset.yaml>... [--node <name>]...
                       [-o text|wide|json|yaml] [--html <file>] [--detailed-exitcode]

Plans, without touching anything, what the node sets (LVMNodeSets, ${GROUP_VERSION}) would do on
the nodes of recorded inventories ({"nodes": [{"name", "labels", "lsblk", "lvm", "signatures", ...}]}):
per node the devices each volume group claims, the devices it excludes and why, the exact commands
in order, what is blocked, and the plan's hash. Two sets that select the same node are refused as
the admission webhook refuses them; a selector value that matches no device of a node is named.

  --inventory <file>     recorded node inventories (JSON; repeatable, - for standard input)
  -f, --nodeset <file>   LVMNodeSets (YAML, several documents per file; repeatable, - for standard input)
  --node <name>          plan only this node of the inventories (repeatable)
  -o, --output <format>  text (default): the plan per node; wide: one line per node and device;
                         json, yaml: the plan document (${PLAN_API_VERSION}, docs/plan-format.md)
  --json                 the same as -o json
  --html <file>          also write the plan as one self-contained HTML page (it loads nothing):
                         nodes × devices coloured by what happens to each and why, the groups'
                         sizes, the commands
  --detailed-exitcode    exit 4 when the plan has changes (as terraform plan -detailed-exitcode)

${exitCodeHelp(["OK", "INVALID", "USAGE", "BLOCKED", "CHANGES"], {
  OK: "the plan was printed: nothing is blocked (and, with --detailed-exitcode, nothing to do)",
})}
`;

/**
 * `pulumi-lvm plan`: reads node sets and recorded inventories, prints the plan (text, a table, or the
 * PlanDocument as JSON/YAML). Invalid input prints its problems on stderr, with the field path, and
 * nothing on stdout. Findings that do not stop the plan (a set selecting no node, a selector value
 * matching no device) go to stderr beside it.
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
  const sets = await readNodeSets(args.nodesets, io);
  const fleet = sets && (await readInventories(args.inventories, io));
  if (!sets || !fleet) return EXIT.INVALID;
  const overlaps = overlapLines(sets, fleet.nodes);
  if (overlaps.length) {
    io.stderr(overlaps.map((l) => `${l} (the admission webhook refuses it)\n`).join(""));
    return EXIT.INVALID;
  }
  const known = new Set(fleet.nodes.map((n) => n.node));
  const unknown = args.nodes.filter((n) => !known.has(n));
  if (unknown.length) {
    io.stderr(unknown.map((n) => `--node ${n}: no node of that name in the inventories\n`).join(""));
    return EXIT.INVALID;
  }
  const shown = args.nodes.length ? fleet.nodes.filter((n) => args.nodes.includes(n.node)) : fleet.nodes;
  let doc: PlanDocument;
  try {
    doc = planNodes(shown, sets.length === 1 ? sets[0]!.set : sets.map((s) => s.set), {
      optionsFor: (node) => fleet.options.get(node) ?? {},
    });
  } catch (error) {
    if (!(error instanceof InventoryError) && !(error instanceof DuplicateNodeError)) throw error;
    io.stderr(`${args.inventories.join(", ")}: ${error.message}\n`);
    return EXIT.INVALID;
  }
  // The page first: a file that cannot be written is exit 1 with nothing on stdout, as for any input.
  if (args.html !== undefined && !(await writePage(io, "plan", args.html, planMap(doc)))) return EXIT.INVALID;
  io.stdout(render(doc, args.format));
  const idle = setsSelectingNoNode(sets, fleet.nodes);
  for (const { file, set } of idle)
    io.stderr(
      `pulumi-lvm plan: ${file}: LVMNodeSet/${set.metadata.name} selects no node of the inventories\n`,
    );
  for (const miss of selectorMisses(doc, sets, shown)) io.stderr(`pulumi-lvm plan: ${missLine(miss)}\n`);
  return planExitCode(doc, idle.length, args.detailed);
}

function render(doc: PlanDocument, format: OutputFormat): string {
  switch (format) {
    case "text":
      return formatPlanText(doc);
    case "wide":
      return formatPlanWide(doc);
    // The canonical JSON (sorted keys, as the hashes are computed over), indented; written directly,
    // not parsed back from the compact text (60 MB of it for 5,000 nodes × 24 devices).
    case "json":
      return `${canonicalJson(doc, 2)}\n`;
    case "yaml":
      return toYaml(JSON.parse(canonicalJson(doc)));
  }
}

/** The Subcommand entry point (src/cli/main.ts). */
export const run = runPlan;

type Args =
  | {
      kind: "run";
      inventories: string[];
      nodesets: string[];
      nodes: string[];
      format: OutputFormat;
      html?: string;
      detailed: boolean;
    }
  | { kind: "help" }
  | { kind: "error"; message: string };

function parseArgs(argv: readonly string[]): Args {
  const line = parseCommandLine(argv, {
    inventory: { type: "string", value: "file", multiple: true },
    nodeset: { type: "string", short: "f", value: "file", multiple: true },
    node: { type: "string", value: "name", multiple: true },
    "detailed-exitcode": { type: "boolean" },
    html: { type: "string", value: "file" },
    ...OUTPUT_FLAGS,
  });
  if (line.kind !== "run") return line;
  const values = line.values as {
    inventory?: string[];
    nodeset?: string[];
    node?: string[];
    "detailed-exitcode"?: boolean;
    html?: string;
  };
  const inventories = values.inventory ?? [];
  const nodesets = values.nodeset ?? [];
  if (inventories.length === 0) return { kind: "error", message: "--inventory is required" };
  if (nodesets.length === 0) return { kind: "error", message: "--nodeset (-f) is required" };
  if ([...inventories, ...nodesets].filter((f) => f === "-").length > 1)
    return { kind: "error", message: "only one file can be - (standard input)" };
  const output = outputFormat(line.values, "text");
  if ("error" in output) return { kind: "error", message: output.error };
  return {
    kind: "run",
    inventories,
    nodesets,
    nodes: values.node ?? [],
    format: output.format,
    ...(values.html !== undefined ? { html: values.html } : {}),
    detailed: values["detailed-exitcode"] === true,
  };
}
