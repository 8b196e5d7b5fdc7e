/**
 * Preview benchmark at fleet size (issue 18): `pulumi preview --diff` with the real engine (the
 * Pulumi CLI, its Node.js language host and the dynamic-provider host, as in test/pulumi) of one
 * NodeSet in sandbox mode (test/pulumi/program with agentUrls/agentTokens) over N nodes, each node a
 * real agent process (test/agent/harness.ts startAgent) on its own two 64 MiB loop devices.
 * check asks every node's agent for a plan; the bound on how many at a time is the provider's
 * PULUMI_LVM_AGENT_CONCURRENCY (src/agent-client/concurrency.ts). Per N it runs:
 *
 *   sequential   PULUMI_LVM_AGENT_CONCURRENCY=1 (one agent after another)
 *   unbounded    PULUMI_LVM_AGENT_CONCURRENCY=N (every agent at once: the provider before the bound)
 *   bounded      the default bound (8)
 *
 * each `rounds` times in a workspace of its own (a first preview in the workspace is run and not
 * counted: it installs nothing, but warms the file cache), printing the median wall time and the
 * load average. Goal: < 10 s at 50 nodes (bounded). Needs root, lvm2, losetup and the Pulumi CLI
 * (test/setup.sh). The loop devices and files are the benchmark's own, removed at the end.
 *
 * Run: `nice -n 10 npx tsx test/bench/preview.bench.ts [nodes,...] [rounds]`, e.g. `10,50 2`.
 * Exit status 1 when the goal is missed at 50 nodes.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { loadavg } from "node:os";
import { requireHostTier, Scratch, startAgent, writeTokenFile, type AgentProcess } from "../agent/harness";
import { PulumiWorkspace, requirePulumiBinaries } from "../pulumi/cli";
import { AGENT_CONCURRENCY_ENV, DEFAULT_AGENT_CONCURRENCY } from "../../src/agent-client/concurrency";

const GOAL_MS = 10_000;
const GOAL_NODES = 50;
const BENCH_ROOT = "/var/tmp/perf-bench";
const VG = "vg-bench";
/** Agents started at a time: each is a Node.js process compiling TypeScript with tsx at start. */
const START_BATCH = 4;

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Fleet {
  readonly agents: AgentProcess[];
  readonly urls: Record<string, string>;
  readonly tokens: Record<string, string>;
  readonly devices: string[];
}

async function startFleet(scratch: Scratch, n: number): Promise<Fleet> {
  const agents: AgentProcess[] = [];
  const urls: Record<string, string> = {};
  const tokens: Record<string, string> = {};
  const devices: string[] = [];
  const nodes = Array.from({ length: n }, (_, i) => `node-${String(i + 1).padStart(3, "0")}`);
  for (let i = 0; i < nodes.length; i += START_BATCH) {
    await Promise.all(
      nodes.slice(i, i + START_BATCH).map(async (node) => {
        const own = [scratch.loop(64), scratch.loop(64)];
        devices.push(...own);
        const tokenFile = scratch.path(`${node}-tokens`);
        tokens[node] = writeTokenFile(tokenFile, { op: { user: "pulumi", node } }).op!;
        const agent = await startAgent({
          node,
          devices: own,
          ...scratch.agentFiles(node),
          auth: { tokenFile },
        });
        agents.push(agent);
        urls[node] = agent.url;
      }),
    );
  }
  return { agents, urls, tokens, devices };
}

/** One workspace of the program over the fleet, with the bound in the engine's environment. */
function workspace(fleet: Fleet, bound: number): PulumiWorkspace {
  const ws = new PulumiWorkspace("bench", randomBytes(12).toString("hex"), {
    root: BENCH_ROOT,
    env: { [AGENT_CONCURRENCY_ENV]: String(bound) },
  });
  ws.init();
  const args = ["config", "set-all", "--path", "--plaintext", `volumeGroup=${VG}`];
  fleet.devices.forEach((d, i) => args.push("--plaintext", `devices[${i}]=${d}`));
  for (const [node, url] of Object.entries(fleet.urls)) {
    args.push("--plaintext", `agentUrls.${node}=${url}`);
    args.push("--secret", `agentTokens.${node}=${fleet.tokens[node]}`);
  }
  ws.ok(args);
  return ws;
}

/** Times `pulumi preview --diff`; checks that every node was planned (a claim per device). */
function preview(ws: PulumiWorkspace, nodes: number): { ms: number; lines: number } {
  const t0 = process.hrtime.bigint();
  const { output } = ws.ok(["preview", "--diff"], { timeoutMs: 600_000 });
  const ms = Number(process.hrtime.bigint() - t0) / 1e6;
  // PULUMI_LVM_BENCH_PREVIEW_OUTPUT=<file>: keep the last preview's text, to read what a person sees.
  if (process.env.PULUMI_LVM_BENCH_PREVIEW_OUTPUT)
    fs.writeFileSync(process.env.PULUMI_LVM_BENCH_PREVIEW_OUTPUT, output);
  const planned = output.split("\n").filter((l) => /steps \(claims 2\)/.test(l)).length;
  if (planned !== nodes)
    throw new Error(
      `expected ${nodes} nodes with "2 steps (claims 2)" in the overview, saw ${planned}:\n${output}`,
    );
  return { ms, lines: output.split("\n").length };
}

export async function runPreviewBench(sizes: number[], rounds: number): Promise<number> {
  requireHostTier();
  requirePulumiBinaries();
  let exit = 0;
  for (const n of sizes) {
    const scratch = new Scratch(`bench-preview-${n}`, BENCH_ROOT);
    let fleet: Fleet | undefined;
    const spaces: PulumiWorkspace[] = [];
    try {
      const t0 = Date.now();
      fleet = await startFleet(scratch, n);
      console.log(
        `preview bench: ${n} agents started in ${((Date.now() - t0) / 1000).toFixed(1)} s (load ${load()})`,
      );
      for (const [name, bound] of [
        ["sequential", 1],
        ["unbounded", n],
        [`bounded(${DEFAULT_AGENT_CONCURRENCY})`, DEFAULT_AGENT_CONCURRENCY],
      ] as const) {
        const ws = workspace(fleet, bound);
        spaces.push(ws);
        preview(ws, n); // warm-up, not counted
        const times: number[] = [];
        let lines = 0;
        for (let r = 0; r < rounds; r++) {
          const run = preview(ws, n);
          times.push(run.ms);
          lines = run.lines;
        }
        const m = median(times);
        console.log(
          `preview bench: N=${n} ${name.padEnd(12)} median ${(m / 1000).toFixed(2)} s of [${times.map((t) => (t / 1000).toFixed(2)).join(", ")}], output ${lines} lines, load ${load()}`,
        );
        if (n === GOAL_NODES && bound === DEFAULT_AGENT_CONCURRENCY && m >= GOAL_MS) {
          console.log(`preview bench: goal < ${GOAL_MS / 1000} s at ${GOAL_NODES} nodes missed`);
          exit = 1;
        }
      }
    } finally {
      await Promise.all((fleet?.agents ?? []).map((a) => a.stop()));
      for (const ws of spaces) ws.cleanup();
      scratch.cleanup();
    }
  }
  return exit;
}

if (require.main === module) {
  const sizes = (process.argv[2] ?? "10,50").split(",").map(Number);
  const rounds = Number(process.argv[3] ?? 2);
  void runPreviewBench(sizes, rounds).then((code) => (process.exitCode = code));
}
