/** `npm run bench`: every benchmark, in order; the exit status is the worst of theirs. */
import { runAgentBench } from "./agent.bench";
import { runOperatorFailoverBench } from "./operator-failover.bench";
import { runOperatorScaleBench } from "./operator-scale.bench";
import { runPlannerBench } from "./planner.bench";
import { runPreviewBench } from "./preview.bench";

async function main(): Promise<number> {
  const planner = await runPlannerBench();
  const agent = await runAgentBench();
  // A real kube-apiserver with N Nodes (test/env/install.sh builds it); N from PULUMI_LVM_BENCH_NODES.
  const nodes = (process.env.PULUMI_LVM_BENCH_NODES ?? "50,100,500").split(",").map(Number);
  const operator = await runOperatorScaleBench(nodes);
  // The leader SIGKILLed mid-reconcile at N nodes; N from PULUMI_LVM_BENCH_FAILOVER_NODES.
  const failoverNodes = (process.env.PULUMI_LVM_BENCH_FAILOVER_NODES ?? "500").split(",").map(Number);
  const failover = await runOperatorFailoverBench(failoverNodes);
  // PULUMI_LVM_BENCH_PREVIEW_NODES (e.g. "10,50,100"): the fleet sizes of the preview benchmark.
  const fleet = (process.env.PULUMI_LVM_BENCH_PREVIEW_NODES ?? "10,50").split(",").map(Number);
  const preview = await runPreviewBench(fleet, 1);
  return Math.max(0, planner, agent, operator, failover, preview);
}

void main().then((code) => (process.exitCode = code));
