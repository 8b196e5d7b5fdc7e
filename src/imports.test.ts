import * as fs from "node:fs";
import * as path from "node:path";
import * as ts from "typescript";

/*
 * No import circles in src/ and provider/ (issue #13): a circle means two files are one concept
 * split in the wrong place, and at run time one of them sees the other half-initialised. Type-only
 * imports count too: they are the same coupling, only erased. The graph is read with TypeScript's
 * own import scanner (ts.preProcessFile), relative imports resolved as tsc resolves them here
 * (`x` → x.ts or x/index.ts); package imports are leaves.
 */

const REPO = path.resolve(__dirname, "..");
const ROOTS = ["src", "provider"];

/**
 * Circles known and owned elsewhere, each as its files in the order this test reports them
 * (starting at the alphabetically first file). Empty is the goal.
 */
const KNOWN_CYCLES: ReadonlyArray<{ cycle: string; why: string }> = [];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === "node_modules" ? [] : sourceFiles(full);
    return entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts") ? [full] : [];
  });
}

function resolveImport(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  const base = path.resolve(path.dirname(from), specifier);
  return [`${base}.ts`, path.join(base, "index.ts"), base].find(
    (candidate) => candidate.endsWith(".ts") && fs.existsSync(candidate),
  );
}

/** File → the files of src/ and provider/ it imports (import, import type, export … from, require). */
function importGraph(files: readonly string[]): Map<string, string[]> {
  const inScope = new Set(files);
  return new Map(
    files.map((file) => {
      const info = ts.preProcessFile(fs.readFileSync(file, "utf8"), true, false);
      const targets = info.importedFiles
        .map((ref) => resolveImport(file, ref.fileName))
        .filter((target): target is string => target !== undefined && inScope.has(target));
      return [file, [...new Set(targets)]];
    }),
  );
}

/** Every elementary circle through the strongly connected components, each once, as repo-relative paths. */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const found = new Map<string, string[]>();
  const nodes = [...graph.keys()].sort();
  // Johnson-style search, bounded: start at each node, only visit nodes greater than the start, so
  // each circle is found once, from its smallest node.
  for (const start of nodes) {
    const stack: string[] = [start];
    const onStack = new Set([start]);
    const walk = (node: string): void => {
      for (const next of graph.get(node) ?? []) {
        if (next === start) {
          const cycle = stack.map((f) => path.relative(REPO, f));
          found.set(cycle.join(" → "), cycle);
        } else if (next > start && !onStack.has(next) && stack.length < 12) {
          stack.push(next);
          onStack.add(next);
          walk(next);
          stack.pop();
          onStack.delete(next);
        }
      }
    };
    walk(start);
  }
  return [...found.values()];
}

/**
 * What each area may import, bottom to top. The API is the base; the planner and inventory are pure
 * and import no I/O; the deployables (agent, operator) share only the wire contract (agent-api) and
 * the libraries beneath it; components and the provider reach the agent through agent-api and
 * agent-client, never its code; the CLI is the top, the one binary that dispatches to the agent and
 * the operator. A new area gets a row here, with the reason in its commit.
 */
const LAYERS: Readonly<Record<string, readonly string[]>> = {
  "src/api": [],
  "src/log": [],
  "src/metrics": [],
  "src/process": [],
  "src/tls": [],
  "src/version": [],
  "src/inventory": ["src/api"],
  "src/planner": ["src/api", "src/inventory"],
  "src/kube": ["src/api"],
  "src/crd": ["src/api", "src/metrics"],
  "src/agent-api": ["src/api"],
  "src/agent-client": ["src/api", "src/agent-api", "src/kube"],
  "src/agent": [
    "src/api",
    "src/agent-api",
    "src/inventory",
    "src/kube",
    "src/log",
    "src/metrics",
    "src/planner",
    "src/process",
  ],
  "src/operator": [
    "src/api",
    "src/agent-api",
    "src/agent-client",
    "src/kube",
    "src/log",
    "src/metrics",
    "src/planner",
    "src/process",
    "src/tls",
    "src/version",
  ],
  provider: ["src/api", "src/agent-api", "src/agent-client", "src/inventory", "src/kube", "src/planner"],
  "src/components": [
    "src/api",
    "src/agent-api",
    "src/metrics",
    "src/planner",
    "src/tls",
    "src/version",
    "provider",
  ],
  "src/migrate": ["src/api", "src/components", "src/planner"],
  "src/cli": [
    "src/api",
    "src/agent",
    "src/agent-api",
    "src/agent-client",
    "src/components", // manifests: LvmSystem's objects from the component's own builders
    "src/inventory",
    "src/kube",
    "src/log",
    "src/metrics",
    "src/migrate",
    "src/operator",
    "src/planner",
    "src/process",
    "src/version",
  ],
  "src/index": ["src/api", "src/components", "src/migrate", "provider"],
};

/** The area of a file: `src/<dir>` or `src/<file>` without its extension, or `provider`. */
function areaOf(file: string): string {
  const parts = path.relative(REPO, file).split(path.sep);
  if (parts[0] === "provider") return "provider";
  return parts.length > 2
    ? `${parts[0]}/${parts[1]}`
    : `${parts[0]}/${(parts[1] ?? "").replace(/\.ts$/, "")}`;
}

/** Imports (tests excluded) from one area into another its LAYERS row does not list. */
function uphillImports(graph: ReadonlyMap<string, readonly string[]>): string[] {
  return [...graph].flatMap(([file, targets]) => {
    if (file.endsWith(".test.ts")) return [];
    const from = areaOf(file);
    const allowed = LAYERS[from];
    if (allowed === undefined) return [`${path.relative(REPO, file)}: area ${from} has no row in LAYERS`];
    return targets
      .filter((target) => areaOf(target) !== from && !allowed.includes(areaOf(target)))
      .map(
        (t) =>
          `${path.relative(REPO, file)} → ${path.relative(REPO, t)} (${from} may not import ${areaOf(t)})`,
      );
  });
}

describe("import graph of src/ and provider/", () => {
  const files = ROOTS.flatMap((root) => sourceFiles(path.join(REPO, root)));
  const graph = importGraph(files);

  test("the scanner sees the imports (a graph without edges would pass anything)", () => {
    const components = graph.get(path.join(REPO, "src/components/index.ts")) ?? [];
    expect(components).toContain(path.join(REPO, "src/components/node-set.ts"));
    expect(
      cycles(
        new Map([
          ["a", ["b"]],
          ["b", ["c"]],
          ["c", ["a"]],
          ["d", ["a"]],
        ]),
      ),
    ).toHaveLength(1);
  });

  test("every import runs downhill: each area imports only the areas its row in LAYERS allows", () => {
    expect(uphillImports(graph)).toEqual([]);
  });

  test("an import that runs uphill is refused (a planted agent → cli import)", () => {
    const planted = new Map(graph);
    const agentMain = path.join(REPO, "src/agent/main.ts");
    planted.set(agentMain, [...(graph.get(agentMain) ?? []), path.join(REPO, "src/cli/exit-codes.ts")]);
    expect(uphillImports(planted)).toEqual([
      "src/agent/main.ts → src/cli/exit-codes.ts (src/agent may not import src/cli)",
    ]);
  });

  test("has no import circles (but the known ones, which must still be there: a fixed one leaves the list)", () => {
    const known = new Set(KNOWN_CYCLES.map((k) => k.cycle));
    const found = cycles(graph).map((cycle) => [...cycle, cycle[0]].join(" → "));
    expect(found.filter((cycle) => !known.has(cycle))).toEqual([]);
    expect([...known].filter((cycle) => !found.includes(cycle))).toEqual([]);
  });
});
