/** `npm run bench`: every benchmark, in order; the exit status is the worst of theirs. */
import { runAgentBench } from "./agent.bench";
import { runPlannerBench } from "./planner.bench";

async function main(): Promise<number> {
  const planner = runPlannerBench();
  const agent = await runAgentBench();
  return Math.max(0, planner, agent);
}

void main().then((code) => (process.exitCode = code));
