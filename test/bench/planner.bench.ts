/**
 * Planner benchmark: plans synthetic fleets of 500, 5,000 and 50,000 nodes × 24 devices for one node
 * set and reports total time, time per node and per device, and how far growth is from linear.
 * Goal (issue 18): 5,000 × 24 in under 0.3 s. Also reports where the time went: the garbage
 * collector's pauses during planNodes, and what hashing alone costs (every node plan's hash is sha256
 * over its canonical JSON, docs/plan-format.md; the agent of each node computes the same hash and
 * compares it before an apply). Run: `npx tsx test/bench/planner.bench.ts [sizes...]`.
 * Exit status 1 when the goal is missed.
 */
import { createHash } from "node:crypto";
import * as os from "node:os";
import { performance, PerformanceObserver, type PerformanceEntry } from "node:perf_hooks";
import * as v8 from "node:v8";
import * as vm from "node:vm";
import { syntheticNodeInventories } from "../../src/inventory/synthetic";
import { canonicalJson, planNodes, type NodePlan } from "../../src/planner";
import { BENCH_NODE_SET } from "./node-set";

const DEVICES_PER_NODE = 24;
const GOAL = { nodes: 5000, ms: 300 };

export interface BenchRow {
  readonly nodes: number;
  readonly devices: number;
  /** Wall-clock time of planNodes. */
  readonly ms: number;
  /** CPU time the process used meanwhile (all its threads: includes the garbage collector's helpers). */
  readonly cpuMs: number;
  /** Wall-clock time of the garbage collector's pauses during planNodes (perf_hooks "gc" entries). */
  readonly gcMs: number;
  /** Bytes planNodes allocated on the JavaScript heap (v8.GCProfiler: the used heap's growth between collections). */
  readonly allocatedBytes: number;
  readonly actions: number;
  /** CPU time of canonicalJson + sha256 over the plans made (the hashes' text, written again). */
  readonly hashCpuMs: number;
  /** Bytes of that text. */
  readonly hashBytes: number;
  /** Wall-clock time of V8's JSON.stringify writing the same plans' canonical text (from copies in key order). */
  readonly textMs: number;
  /** Wall-clock time of sha256 over those texts. */
  readonly sha256Ms: number;
}

v8.setFlagsFromString("--expose-gc");
/** A full garbage collection, so the generator's garbage is not collected on the planner's time. */
const collectGarbage = vm.runInNewContext("gc") as () => void;

/** Plans `nodes` synthetic nodes (generated first, not timed) and returns the time planNodes took. */
export async function benchPlanner(nodes: number): Promise<BenchRow> {
  const inventories = syntheticNodeInventories(nodes, { devicesPerNode: DEVICES_PER_NODE });
  collectGarbage();
  const gc = gcPauses();
  const allocation = allocatedBytes();
  const cpu = process.cpuUsage();
  const from = performance.now();
  const doc = planNodes(inventories, BENCH_NODE_SET);
  const to = performance.now();
  const used = process.cpuUsage(cpu);
  const allocated = allocation.stop();
  const actions = doc.nodes.reduce((n, p) => n + p.actions.length, 0);
  return {
    nodes,
    devices: inventories.reduce((n, i) => n + i.devices.length, 0),
    ms: to - from,
    cpuMs: (used.user + used.system) / 1000,
    gcMs: await gc.between(from, to),
    allocatedBytes: allocated,
    actions,
    ...hashingCost(doc.nodes),
  };
}

/** Collects the garbage collector's pauses from now on; node reports them after the code that caused them. */
function gcPauses(): { between(from: number, to: number): Promise<number> } {
  const entries: PerformanceEntry[] = [];
  const observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
  observer.observe({ entryTypes: ["gc"] });
  return {
    async between(from, to) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      observer.disconnect();
      return entries
        .filter((e) => e.startTime >= from && e.startTime < to)
        .reduce((ms, e) => ms + e.duration, 0);
    },
  };
}

/**
 * Counts what is allocated from now on: the used heap's growth from each collection's end to the next
 * one's start, and to now (nothing is freed between collections).
 */
function allocatedBytes(): { stop(): number } {
  const profiler = new v8.GCProfiler();
  const start = v8.getHeapStatistics().used_heap_size;
  profiler.start();
  return {
    stop() {
      const end = v8.getHeapStatistics().used_heap_size;
      const { statistics } = profiler.stop();
      let bytes = 0;
      let after = start;
      for (const gc of statistics) {
        bytes += gc.beforeGC.heapStatistics.usedHeapSize - after;
        after = gc.afterGC.heapStatistics.usedHeapSize;
      }
      return bytes + end - after;
    },
  };
}

/**
 * What writing each plan's canonical JSON and hashing it costs, alone: the floor under planNodes.
 * Also split, in wall time: V8's own JSON.stringify of the plans, each a copy with its keys already
 * in canonical order (so JSON.stringify writes the canonical text itself, checked below), and sha256
 * over those texts. No serializer of the same text is cheaper than JSON.stringify, and the hash must
 * cover the whole text (docs/plan-format.md), so their sum is what any planNodes that hashes every
 * plan costs, before it plans anything.
 */
function hashingCost(
  plans: readonly NodePlan[],
): Pick<BenchRow, "hashCpuMs" | "hashBytes" | "textMs" | "sha256Ms"> {
  const unhashed = plans.map(({ hash: _hash, ...plan }) => plan);
  collectGarbage();
  let bytes = 0;
  const cpu = process.cpuUsage();
  for (const p of unhashed) {
    const text = canonicalJson(p);
    bytes += text.length;
    createHash("sha256").update(text).digest("hex");
  }
  const used = process.cpuUsage(cpu);
  // In chunks of 5,000 plans, so that the 50,000-node row's copies and texts fit in the heap.
  let textMs = 0;
  let sha256Ms = 0;
  for (let from = 0; from < unhashed.length; from += 5000) {
    const chunk = unhashed.slice(from, from + 5000);
    const ordered = chunk.map((p) => JSON.parse(canonicalJson(p)) as unknown);
    collectGarbage();
    const texts = new Array<string>(ordered.length);
    const t0 = performance.now();
    for (let i = 0; i < ordered.length; i++) texts[i] = JSON.stringify(ordered[i]);
    const t1 = performance.now();
    for (const text of texts) createHash("sha256").update(text).digest("hex");
    const t2 = performance.now();
    textMs += t1 - t0;
    sha256Ms += t2 - t1;
    texts.forEach((text, i) => {
      if (text !== canonicalJson(chunk[i]))
        throw new Error(`plan ${from + i}: JSON.stringify did not write the canonical text`);
    });
  }
  return {
    hashCpuMs: (used.user + used.system) / 1000,
    hashBytes: bytes,
    textMs,
    sha256Ms,
  };
}

export function formatTable(rows: readonly BenchRow[]): string {
  const base = rows[0]!;
  const header = [
    "nodes",
    "devices",
    "total ms",
    "cpu ms",
    "gc ms",
    "alloc MB",
    "µs/node",
    "µs/device",
    "actions",
    "vs linear",
    "hash-only cpu ms (MB)",
    "floor ms: text + sha256",
  ];
  const lines = rows.map((r) => [
    r.nodes.toLocaleString("en-US"),
    r.devices.toLocaleString("en-US"),
    r.ms.toFixed(1),
    r.cpuMs.toFixed(1),
    r.gcMs.toFixed(1),
    (r.allocatedBytes / 1e6).toFixed(0),
    ((r.ms * 1000) / r.nodes).toFixed(1),
    ((r.ms * 1000) / r.devices).toFixed(2),
    r.actions.toLocaleString("en-US"),
    `${(r.ms / r.devices / (base.ms / base.devices)).toFixed(2)}×`,
    `${r.hashCpuMs.toFixed(0)} (${(r.hashBytes / 1e6).toFixed(0)})`,
    `${(r.textMs + r.sha256Ms).toFixed(0)}: ${r.textMs.toFixed(0)} + ${r.sha256Ms.toFixed(0)}`,
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const row = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i]!)).join("  ");
  return [row(header), row(widths.map((w) => "-".repeat(w))), ...lines.map(row)].join("\n");
}

export async function runPlannerBench(sizes: readonly number[] = [500, 5000, 50000]): Promise<number> {
  await benchPlanner(2000); // warm up the JIT, so the first row is not mostly compilation
  const rows: BenchRow[] = [];
  for (const n of sizes) rows.push(await benchPlanner(n));
  const load = os.loadavg()[0]!.toFixed(2);
  console.log(
    `planner: planNodes over synthetic nodes × ${DEVICES_PER_NODE} devices (node ${process.version}, ${process.arch}, ${os.cpus().length} cpus, load ${load})\n`,
  );
  console.log(formatTable(rows));
  const goal = rows.find((r) => r.nodes === GOAL.nodes);
  if (!goal) return 0;
  const ok = goal.ms < GOAL.ms;
  console.log(
    `\ngoal ${GOAL.nodes.toLocaleString("en-US")} nodes × ${DEVICES_PER_NODE} devices under ${GOAL.ms} ms: ${ok ? "met" : "MISSED"} (${goal.ms.toFixed(0)} ms)`,
  );
  if (!ok)
    console.log(
      `floor at ${GOAL.nodes.toLocaleString("en-US")} nodes: JSON.stringify of the plans' text ${goal.textMs.toFixed(0)} ms + sha256 ${goal.sha256Ms.toFixed(0)} ms = ${(goal.textMs + goal.sha256Ms).toFixed(0)} ms before any planning (docs/lvm-performance.md, "Fourth round")`,
    );
  return ok ? 0 : 1;
}

if (require.main === module) {
  const sizes = process.argv
    .slice(2)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
  void runPlannerBench(sizes.length ? sizes : undefined).then((code) => (process.exitCode = code));
}
