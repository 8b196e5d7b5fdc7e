import { checkLVMNodeSet, type LVMNodeSet } from "../api";
import { InventoryParseError, parseNodeInventory } from "../inventory/parse";
import type { NodeInventory, RawNodeInventory } from "../inventory/types";
import { recordedPlanOptions, type PlanOptions } from "../planner";
import { nameOf, readInput } from "./input";
import type { CliIO } from "../process/subcommand";
import { duplicateNodeSetNames, readManifestDocuments } from "./manifest-documents";

/** A node set and the file it came from (for messages). */
export interface FileNodeSet {
  readonly file: string;
  readonly set: LVMNodeSet;
}

/** The nodes of every inventory file, and what each file recorded of its node's agent. */
export interface Fleet {
  readonly nodes: readonly NodeInventory[];
  readonly options: ReadonlyMap<string, PlanOptions>;
}

/**
 * The LVMNodeSets of every file, in order, validated (other documents are ignored). Problems go to
 * stderr as `<file>: LVMNodeSet/<name>: <path>: <message>`, every one of every set of every file; a
 * name used twice (in one file or across them) is one. Undefined when there is any problem.
 */
export async function readNodeSets(files: readonly string[], io: CliIO): Promise<FileNodeSet[] | undefined> {
  const valid: FileNodeSet[] = [];
  const problems: string[] = [];
  const seen = new Map<string, string>();
  for (const input of files) {
    const text = await readInput(input, io);
    if (text === undefined) return undefined;
    const file = nameOf(input);
    const { documents, problems: unreadable } = readManifestDocuments(file, text);
    const sets = documents.filter((d) => (d.value as { kind?: unknown } | null)?.kind === "LVMNodeSet");
    problems.push(...unreadable, ...duplicateNodeSetNames(sets, seen));
    if (sets.length === 0 && unreadable.length === 0) problems.push(`${file}: no LVMNodeSet document in it`);
    for (const { value } of sets) {
      const checked = checkLVMNodeSet(value);
      if (checked.ok) {
        valid.push({ file, set: checked.value });
        continue;
      }
      const name = (value as { metadata?: { name?: unknown } }).metadata?.name;
      const who = `LVMNodeSet/${typeof name === "string" && name ? name : "(unnamed)"}`;
      problems.push(...checked.problems.map((p) => `${file}: ${who}: ${p.path}: ${p.message}`));
    }
  }
  if (problems.length) {
    io.stderr(problems.map((l) => `${l}\n`).join(""));
    return undefined;
  }
  return valid;
}

/**
 * The nodes of every inventory file ({"nodes": [<raw inventory>, ...]}), parsed, with the agent's
 * plan options each recorded (inventory --agent-state-dir). A node named in two files, or twice in
 * one, is invalid input: which of the two recordings is the node's would be a guess.
 */
export async function readInventories(files: readonly string[], io: CliIO): Promise<Fleet | undefined> {
  const nodes: NodeInventory[] = [];
  const options = new Map<string, PlanOptions>();
  const from = new Map<string, string>();
  for (const input of files) {
    const file = nameOf(input);
    const raw = await readInventoryNodes(input, io);
    if (!raw) return undefined;
    for (const r of raw) {
      let node: NodeInventory;
      let recorded: PlanOptions;
      try {
        node = parseNodeInventory(r);
        recorded = recordedPlanOptions(r);
      } catch (error) {
        if (!(error instanceof InventoryParseError)) throw error;
        io.stderr(`${file}: ${error.message}\n`);
        return undefined;
      }
      const first = from.get(node.node);
      if (first !== undefined) {
        io.stderr(
          first === file
            ? `${file}: the inventory has two nodes named ${node.node}\n`
            : `${file}: node ${node.node} is also in ${first}; record each node once\n`,
        );
        return undefined;
      }
      from.set(node.node, file);
      nodes.push(node);
      options.set(node.node, recorded);
    }
  }
  return { nodes, options };
}

async function readInventoryNodes(input: string, io: CliIO): Promise<RawNodeInventory[] | undefined> {
  const file = nameOf(input);
  const text = await readInput(input, io);
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
  return nodes as RawNodeInventory[];
}
