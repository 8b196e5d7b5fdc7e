/**
 * Agent benchmark, on real loop devices with real lvm2 (needs root):
 *
 *  1. Apply overhead: the same plan (pvcreate ×4, vgcreate, pvchange ×4 on four loop devices) run
 *     once as its lvm commands directly (execFile, same lvm filter) and once as POST /v1/apply to an
 *     agent process (which re-discovers, re-plans, checks the hash and device identities, journals
 *     with fsync, probes each new PV's UUID, writes lvmd.yaml). Median of several rounds; the ratio
 *     agent/direct has a goal of <= 1.10. Also printed: how much of the agent's time is its
 *     re-discovery (GET /v1/inventory on the same devices).
 *  2. Inventory latency: GET /v1/inventory of an agent restricted to 64 loop devices, with the
 *     time of each tool's commands during one inventory (from the agent's command log; with
 *     concurrent probes their sum exceeds the wall time).
 *
 * Loop devices and backing files are the benchmark's own (under /var/tmp/perf-bench/), removed at
 * the end. The machine's load average is printed with the numbers: on a shared machine they are noisy.
 *
 * Run: `npx tsx test/bench/agent.bench.ts [rounds]`. Exit status 1 when the apply goal is missed.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { loadavg } from "node:os";
import {
  filterConfig,
  lvm,
  request,
  Scratch,
  startAgent,
  thickSpec,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";

const GOAL_RATIO = 1.1;
const APPLY_DEVICES = 4;
const INVENTORY_DEVICES = 64;

const BENCH_ROOT = "/var/tmp/perf-bench";

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const ms = (t0: bigint) => Number(process.hrtime.bigint() - t0) / 1e6;
const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(" ");

/** Per tool: how many commands and their summed duration, from the agent's command log after `from` lines. */
function commandTimes(file: string, from: number): { lines: number; byTool: Map<string, [number, number]> } {
  // Only "end" lines carry a duration; each command also has a "start" line before it.
  const lines = fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l !== "" && !l.startsWith('{"event":"start"'));
  const byTool = new Map<string, [number, number]>();
  for (const line of lines.slice(from)) {
    const e = JSON.parse(line) as { tool: string; requested: string[]; durationMs: number };
    const tool = e.tool === "lvm" ? `lvm ${e.requested[1]}` : e.tool;
    const [n, total] = byTool.get(tool) ?? [0, 0];
    byTool.set(tool, [n + 1, total + e.durationMs]);
  }
  return { lines: lines.length, byTool };
}

function runDirect(devices: readonly string[], argv: readonly string[]): void {
  const [tool, ...rest] = argv;
  execFileSync(tool!, [...(tool === "wipefs" ? [] : ["--config", filterConfig(devices)]), ...rest], {
    env: { ...process.env, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1" },
    stdio: "ignore",
  });
}

function reset(devices: readonly string[], vg: string): void {
  lvm(devices, ["vgremove", "--force", vg], true);
  for (const d of devices) lvm(devices, ["pvremove", "--force", "--force", "--yes", d], true);
}

async function applyOverhead(
  rounds: number,
): Promise<{ direct: number; agent: number; discovery: number; commands: number }> {
  const scratch = new Scratch("bench-apply", BENCH_ROOT);
  let agent: AgentProcess | undefined;
  try {
    const devices = Array.from({ length: APPLY_DEVICES }, () => scratch.loop(128));
    const { op: token } = writeTokenFile(scratch.path("tokens"), { op: { user: "bench", node: "*" } });
    agent = await startAgent({
      node: "node-bench",
      devices,
      ...scratch.agentFiles(),
      auth: { tokenFile: scratch.path("tokens") },
    });
    const vg = `agt-bench-${randomBytes(3).toString("hex")}`;
    const spec = thickSpec(vg, devices);
    const direct: number[] = [];
    const viaAgent: number[] = [];
    const discovery: number[] = [];
    let commands = 0;
    for (let round = 0; round < rounds; round++) {
      const plan = (await request(agent.url, "POST", "/v1/plan", { token, body: { spec } })).json;
      const argvs = plan.actions
        .filter((a: { argv: string[] }) => a.argv.length)
        .map((a: { argv: string[] }) => a.argv);
      commands = argvs.length;

      let t0 = process.hrtime.bigint();
      for (const argv of argvs) runDirect(devices, argv);
      direct.push(ms(t0));
      reset(devices, vg);

      t0 = process.hrtime.bigint();
      await request(agent.url, "GET", "/v1/inventory", { token });
      discovery.push(ms(t0));

      const fresh = (await request(agent.url, "POST", "/v1/plan", { token, body: { spec } })).json;
      t0 = process.hrtime.bigint();
      const res = await request(agent.url, "POST", "/v1/apply", {
        token,
        body: { spec, planHash: fresh.hash },
      });
      viaAgent.push(ms(t0));
      if (res.status !== 200) throw new Error(`apply: HTTP ${res.status}: ${res.text}`);
      reset(devices, vg);
    }
    return { direct: median(direct), agent: median(viaAgent), discovery: median(discovery), commands };
  } finally {
    await agent?.stop();
    scratch.cleanup();
  }
}

interface InventoryLatency {
  median: number;
  first: number;
  devices: number;
  /** tool → [commands, summed ms] during the last inventory. */
  byTool: Map<string, [number, number]>;
}

async function inventoryLatency(rounds: number): Promise<InventoryLatency> {
  const scratch = new Scratch("bench-inventory", BENCH_ROOT);
  let agent: AgentProcess | undefined;
  try {
    const devices = Array.from({ length: INVENTORY_DEVICES }, () => scratch.loop(16));
    const { op: token } = writeTokenFile(scratch.path("tokens"), { op: { user: "bench", node: "*" } });
    const log = scratch.path("commands.jsonl");
    agent = await startAgent({
      node: "node-bench-inv",
      devices,
      stateDir: scratch.path("state"),
      lvmdConfig: scratch.path("lvmd.yaml"),
      commandLog: log,
      auth: { tokenFile: scratch.path("tokens") },
    });
    const times: number[] = [];
    let seen = 0;
    let byTool = new Map<string, [number, number]>();
    for (let i = 0; i < rounds; i++) {
      const before = fs.existsSync(log) ? commandTimes(log, 0).lines : 0;
      const t0 = process.hrtime.bigint();
      const res = await request(agent.url, "GET", "/v1/inventory", { token });
      times.push(ms(t0));
      if (res.status !== 200) throw new Error(`inventory: HTTP ${res.status}: ${res.text}`);
      seen = res.json.devices.length;
      byTool = commandTimes(log, before).byTool;
    }
    return { median: median(times.slice(1)), first: times[0]!, devices: seen, byTool };
  } finally {
    await agent?.stop();
    scratch.cleanup();
  }
}

export async function runAgentBench(rounds = 5): Promise<number> {
  console.log(`load average before: ${load()}`);
  const apply = await applyOverhead(rounds);
  const ratio = apply.agent / apply.direct;
  console.log(
    `agent apply overhead (${APPLY_DEVICES} loop devices, ${apply.commands} lvm commands, median of ${rounds}):`,
  );
  console.log(`  lvm commands run directly: ${apply.direct.toFixed(0)} ms`);
  console.log(
    `  POST /v1/apply:            ${apply.agent.toFixed(0)} ms  (ratio ${ratio.toFixed(2)}, goal <= ${GOAL_RATIO})`,
  );
  console.log(
    `  of which re-discovery:     ~${apply.discovery.toFixed(0)} ms (GET /v1/inventory on the same devices)`,
  );
  console.log(`  ratio without re-discovery: ${((apply.agent - apply.discovery) / apply.direct).toFixed(2)}`);
  const inv = await inventoryLatency(rounds + 1);
  console.log(
    `inventory latency, ${inv.devices} loop devices: median ${inv.median.toFixed(0)} ms (first ${inv.first.toFixed(0)} ms)`,
  );
  const tools = [...inv.byTool].map(([tool, [n, total]]) => `${tool} ${n}× ${total.toFixed(0)} ms`);
  console.log(`  commands of the last inventory (summed durations): ${tools.join(", ")}`);
  console.log(`load average after: ${load()}`);
  if (ratio > GOAL_RATIO) {
    console.log(`GOAL MISSED: agent/direct ${ratio.toFixed(2)} > ${GOAL_RATIO}`);
    return 1;
  }
  return 0;
}

if (require.main === module)
  void runAgentBench(Number(process.argv[2] ?? 5)).then(
    (code) => (process.exitCode = code),
    (e) => {
      console.error(e);
      process.exitCode = 1;
    },
  );
