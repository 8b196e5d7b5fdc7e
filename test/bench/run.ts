/** `npm run bench`: every benchmark, in order; the exit status is the worst of theirs. */
import { runAgentBench } from "./agent.bench";
import { runOperatorScaleBench } from "./operator-scale.bench";
import { runPlannerBench } from "./planner.bench";

async function main(): Promise<number> {
  const planner = runPlannerBench();
  const agent = await runAgentBench();
  // A real kube-apiserver with N Nodes (test/env/install.sh builds it); N from PULUMI_LVM_BENCH_NODES.
  const sizes = (process.env.PULUMI_LVM_BENCH_NODES ?? "50,100,500").split(",").map(Number);
  const operator = await runOperatorScaleBench(sizes);
  return Math.max(0, planner, agent, operator);
}

void main().then((code) => (process.exitCode = code));
