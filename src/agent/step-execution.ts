import * as fs from "node:fs";
import * as path from "node:path";
import type { NodeInventory } from "../inventory/types";
import type { PlanAction } from "../planner/types";
import { ActionRefusedError, decide, stateFromInventory } from "./action-checks";
import { FileWriteError, writeFileAtomic } from "./atomic-file";
import type { IdentityProbeDeps } from "./device-identity";
import type { Journal } from "./journal";
import { LvmCommandError, type Runner } from "./lvm-runner";
import { readPvUuid } from "./pv-label";

/** What running a step needs (src/agent/apply.ts's OperationDeps has all of it). */
export interface StepDeps {
  readonly run: Runner;
  /** Fresh inventory of this node's devices (re-discovered before every operation), nothing cached. */
  readonly discover: () => Promise<NodeInventory>;
  /** Told the devices of each step that was started, once it ended (done, failed or timed out). */
  readonly touched?: (devices: readonly string[]) => void;
  readonly journal: Journal;
  /** Filesystem seams of the identity probe; its runner is `run`. @default the real /dev and /sys */
  readonly identity?: Omit<IdentityProbeDeps, "run">;
  /** Where lvmd.yaml goes. */
  readonly lvmdConfigPath: string;
  /** When aborted, the running command is killed (with its process group): the shutdown grace ran out. */
  readonly killSignal?: AbortSignal;
}

/**
 * Runs one step; when its command timed out, the outcome is unknown (the command may have done its
 * work before it was killed): the node is re-discovered and the step's postcondition re-checked.
 */
export async function executeChecked(
  deps: StepDeps,
  action: PlanAction,
  wipeScope: ReadonlySet<string>,
): Promise<{ skipped?: string; pvUuid?: string }> {
  try {
    return await execute(deps, action);
  } catch (e) {
    if (!(e instanceof LvmCommandError) || !e.details.timedOut) throw e;
    let decision: ReturnType<typeof decide>;
    try {
      decision = decide(action, stateFromInventory(await deps.discover()), deps.journal.wiped(wipeScope));
    } catch {
      throw e;
    }
    if (decision.run) throw e;
    const pvUuid =
      action.op === "pvcreate" && action.device
        ? await (deps.identity?.readPvUuid ?? readPvUuid)(action.device).catch(() => undefined)
        : undefined;
    return {
      skipped: `${e.message}; re-checked afterwards: ${decision.skipped}, so it is done`,
      ...(pvUuid ? { pvUuid } : {}),
    };
  }
}

/** Runs one step. pvcreate reports the new PV's UUID (journaled: a PV this agent created may be adopted after a crash). */
async function execute(deps: StepDeps, action: PlanAction): Promise<{ skipped?: string; pvUuid?: string }> {
  if (action.op === "write-lvmd-config") {
    if (!action.file) throw new ActionRefusedError(action, "carries no file content");
    if (action.file.path !== deps.lvmdConfigPath)
      throw new ActionRefusedError(
        action,
        `writes ${action.file.path}, but this agent's lvmd.yaml is ${deps.lvmdConfigPath}`,
      );
    // A bare host (AgentHost, sandbox) has no /etc/topolvm yet: in a cluster the DaemonSet's hostPath
    // makes it. Only this agent's own lvmd.yaml directory (checked just above), never a device.
    try {
      fs.mkdirSync(path.dirname(action.file.path), { recursive: true, mode: 0o755 });
    } catch (e) {
      throw new FileWriteError(action.file.path, e);
    }
    writeFileAtomic(action.file.path, action.file.content, 0o644);
    return {};
  }
  try {
    await deps.run(action.argv, {
      ...(action.op === "pvmove" ? { timeoutMs: 24 * 3600_000 } : {}),
      ...(deps.killSignal ? { signal: deps.killSignal } : {}),
    });
  } catch (e) {
    // lvextend to the size the pool already has: the postcondition holds.
    if (
      action.op === "lvextend-thinpool" &&
      e instanceof LvmCommandError &&
      /matches existing size/.test(e.stderr)
    )
      return { skipped: "the thin pool already has that size" };
    // lvm (2.03.16+) grew the metadata along with the data in the lvextend just before.
    if (
      action.op === "lvextend-thinpool-metadata" &&
      e instanceof LvmCommandError &&
      /not larger than existing size/.test(e.stderr)
    )
      return { skipped: "the thin pool's metadata already has at least that size" };
    // The device is not in lvm's devices file (a deldev repeated after a crash): the postcondition holds.
    if (
      action.op === "lvmdevices-deldev" &&
      e instanceof LvmCommandError &&
      /No devices file entry for/.test(e.stderr)
    )
      return { skipped: `${action.device} is not in lvm's devices file` };
    throw e;
  }
  if (action.op !== "pvcreate" || !action.device) return {};
  const uuid = await (deps.identity?.readPvUuid ?? readPvUuid)(action.device);
  return uuid ? { pvUuid: uuid } : {};
}
