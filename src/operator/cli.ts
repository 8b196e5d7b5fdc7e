import type { CliIO } from "../process/subcommand";
import { catchStopSignals, whenAborted } from "../process/stop-signal";
import { OPERATOR_USAGE, OperatorConfigError } from "./config";
import { startOperator, type RunningOperator } from "./main";

/**
 * `pulumi-lvm operator`: runs until SIGTERM/SIGINT, then stops gracefully and returns 0; 2 on a bad
 * configuration, 1 when it cannot start or lost the leader Lease (--leader-elect).
 */
export async function run(io: CliIO): Promise<number> {
  if (io.argv.includes("--help") || io.argv.includes("-h")) {
    io.stdout(`${OPERATOR_USAGE}\n`);
    return 0;
  }
  // Caught before starting: a SIGTERM while the operator starts stops it as soon as it has (stop-signal.ts).
  const own = io.stopSignal ? undefined : catchStopSignals();
  const stopSignal = io.stopSignal ?? own!.signal;
  let running: RunningOperator;
  try {
    running = await startOperator({ argv: io.argv, env: process.env });
  } catch (e) {
    own?.dispose();
    io.stderr(`pulumi-lvm operator: ${e instanceof Error ? e.message : String(e)}\n`);
    if (e instanceof OperatorConfigError) io.stderr(`${OPERATOR_USAGE}\n`);
    return e instanceof OperatorConfigError ? 2 : 1;
  }
  // Lost the leader Lease: reconciling has stopped; exit so the pod restarts as a standby.
  const end = await Promise.race([
    whenAborted(stopSignal).then(() => "signal" as const),
    running.ended.then((e) => (e === "lost" ? e : new Promise<never>(() => {}))),
  ]);
  own?.dispose();
  if (end === "lost") io.stderr("pulumi-lvm operator: lost the leader Lease; exiting\n");
  await running.stop();
  return end === "lost" ? 1 : 0;
}
