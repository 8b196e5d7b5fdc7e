import type { CliIO } from "../cli/io";
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
  let running: RunningOperator;
  try {
    running = await startOperator({ argv: io.argv, env: process.env });
  } catch (e) {
    io.stderr(`pulumi-lvm operator: ${e instanceof Error ? e.message : String(e)}\n`);
    if (e instanceof OperatorConfigError) io.stderr(`${OPERATOR_USAGE}\n`);
    return e instanceof OperatorConfigError ? 2 : 1;
  }
  return new Promise<number>((resolve) => {
    const stop = () => void running.stop().then(() => resolve(0));
    process.once("SIGTERM", stop);
    process.once("SIGINT", stop);
    // Lost the leader Lease: reconciling has stopped; exit so the pod restarts as a standby.
    void running.ended.then((end) => {
      if (end !== "lost") return;
      process.removeListener("SIGTERM", stop);
      process.removeListener("SIGINT", stop);
      io.stderr("pulumi-lvm operator: lost the leader Lease; exiting\n");
      void running.stop().then(() => resolve(1));
    });
  });
}
