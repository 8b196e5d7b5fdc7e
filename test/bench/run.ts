/** `npm run bench`: every benchmark, in order; the exit status is the worst of theirs. */
import { runAgentBench } from "./agent.bench";
import { runPlannerBench } from "./planner.bench";
import { runPreviewBench } from "./preview.bench";

async function main(): Promise<number> {
  const planner = runPlannerBench();
  const agent = await runAgentBench();
  // PULUMI_LVM_BENCH_PREVIEW_NODES (e.g. "10,50,100"): the fleet sizes of the preview benchmark.
  const sizes = (process.env.PULUMI_LVM_BENCH_PREVIEW_NODES ?? "10,50").split(",").map(Number);
  const preview = await runPreviewBench(sizes, 1);
  return Math.max(0, planner, agent, preview);
}

void main().then((code) => (process.exitCode = code));
