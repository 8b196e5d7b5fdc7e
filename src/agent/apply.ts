import { randomUUID } from "node:crypto";
import type { NodeInventory } from "../inventory/types";
import type { NodePlan, PlanAction } from "../planner/types";
import { applyEffect, decide, devicesOf, stateFromInventory } from "./action-checks";
import { approve } from "./approval";
import { AgentError } from "./errors";
import type { OperationKind } from "./journal";
import { executeChecked, type StepDeps } from "./step-execution";
import {
  appendOrFail,
  deviceFields,
  isJournalClosed,
  journalError,
  stepFailure,
  type StepResult,
} from "./step-records";
import { checkVolumeGroupNames, deviceIdentityCheck } from "./step-safety";

// What an operation approves, records and re-checks lives beside it; these stay importable from here.
export { approvedDevicesOf, claimedByVolumeGroupOf, claimedDevicesOf, destructiveStepsOf } from "./approval";
export type { StepResult } from "./step-records";

/** What an operation needs: what running its steps needs, and what orders them. */
export interface OperationDeps extends StepDeps {
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** @default crypto.randomUUID */
  readonly newId?: () => string;
  /** Between steps: when aborted, the operation stops before its next step and stays resumable. */
  readonly stopSignal?: AbortSignal;
  /** Test-only seam: awaited after each step (index 0-based) completes, e.g. to pause for a kill -9. */
  readonly afterStep?: (index: number, action: PlanAction) => Promise<void>;
  /**
   * Whether the agent sees only some of the machine's devices (--devices): then a volume group an
   * apply creates is checked against the names of every group on the machine (checkVolumeGroupNames).
   * @default true
   */
  readonly confined?: boolean;
}

export interface OperationRequest {
  readonly kind: OperationKind;
  /** The spec as the caller sent it; journaled. */
  readonly spec: unknown;
  /** Teardown only: its target ({volumeGroup?, deviceClass?, force?}); journaled. */
  readonly target?: unknown;
  /** sha256 of the canonical JSON of {spec, target}: a resumed operation must have the same. */
  readonly specDigest: string;
  /** The plan hash the caller saw and approved; undefined: approve the fresh plan (teardown without a hash). */
  readonly approvedHash: string | undefined;
  /** Plans against the fresh inventory. */
  readonly plan: (inventory: NodeInventory) => NodePlan;
  /** Checks before anything is written (e.g. teardown's "no user volumes"); throws an AgentError to refuse. */
  readonly precheck?: (inventory: NodeInventory, plan: NodePlan) => void;
}

export interface OperationResult {
  readonly operation: string;
  readonly kind: OperationKind;
  readonly node: string;
  /** The hash the caller approved. */
  readonly approvedHash: string;
  /** The hash of the plan executed (the fresh plan). */
  readonly planHash: string;
  /** The interrupted operation this one resumed. */
  readonly resumed?: string;
  readonly steps: readonly StepResult[];
  readonly blocked: NodePlan["blocked"];
}

/**
 * Executes one apply or teardown: re-discover, re-plan, compare with the plan the caller approved,
 * then run the plan's steps in order through the runner, journaling each before and after it runs.
 *
 * Approval: the fresh plan's hash must equal the caller's. The one exception is resuming: when the
 * journal's last operation was interrupted (the agent died during it) and the caller sends that
 * operation's approved hash and spec again, the fresh plan (which differs, because part of it is
 * done) is executed if, and only if, every device it writes to was in the interrupted operation's
 * approved device set. Otherwise: 409 with the fresh plan.
 *
 * Every step is checked against the state first (skipped when its postcondition holds, refused when
 * its precondition does not), and every device step re-checks the device's identity with a fresh
 * probe right before it runs. A device is never wiped twice.
 */
export async function runOperation(deps: OperationDeps, req: OperationRequest): Promise<OperationResult> {
  const clock = deps.clock ?? (() => new Date());
  const now = () => clock().toISOString();
  const { journal } = deps;
  const inventory = await deps.discover();
  const fresh = req.plan(inventory);
  const interrupted = journal.interrupted();
  const approval = approve(interrupted, fresh, req);
  req.precheck?.(inventory, fresh);
  await checkVolumeGroupNames(deps.run, inventory, fresh, deps.confined ?? true);

  const op = (deps.newId ?? randomUUID)();
  if (interrupted)
    journal.append({
      type: "operation-finish",
      op: interrupted.start.op,
      at: now(),
      result: "superseded",
      error: { message: `interrupted; ${approval.resumes ? "resumed" : "replaced"} by operation ${op}` },
    });
  journal.append({
    type: "operation-start",
    op,
    kind: req.kind,
    at: now(),
    approvedHash: req.approvedHash ?? fresh.hash,
    planHash: fresh.hash,
    specDigest: req.specDigest,
    spec: req.spec,
    ...(req.target !== undefined ? { target: req.target } : {}),
    devices: approval.devices,
    destructive: approval.destructive,
    claimed: approval.claimed,
    claimedByVolumeGroup: approval.claimedByVolumeGroup,
    actionCount: fresh.actions.length,
    ...(approval.resumes ? { resumes: approval.resumes } : {}),
  });

  const wipeScope = journal.resumeChain(op);
  const state = stateFromInventory(inventory);
  const verifyIdentities = deviceIdentityCheck(state, approval.devices, fresh, {
    ...deps.identity,
    run: deps.run,
  });
  const steps: StepResult[] = [];
  for (const [index, action] of fresh.actions.entries()) {
    if (deps.stopSignal?.aborted)
      throw new AgentError(
        503,
        "AgentStopping",
        `the agent is stopping; operation ${op} stopped before step ${index + 1} and resumes when the same request is sent again`,
        {
          operation: op,
          steps,
        },
      );
    const started = Date.now();
    let outcome: StepResult["outcome"] = "done";
    let reason = action.reason;
    let pvUuid: string | undefined;
    try {
      const decision = decide(action, state, journal.wiped(wipeScope));
      if (!decision.run) {
        outcome = "skipped";
        reason = decision.skipped;
      } else {
        await verifyIdentities(action);
        journal.append({
          type: "action-start",
          op,
          index,
          at: now(),
          action: action.op,
          argv: action.argv,
          ...deviceFields(action),
        });
        let done: Awaited<ReturnType<typeof executeChecked>>;
        try {
          done = await executeChecked(deps, action, wipeScope);
        } finally {
          const devices = devicesOf(action);
          if (devices.length) deps.touched?.(devices);
        }
        if (done.skipped) {
          outcome = "skipped";
          reason = done.skipped;
        }
        pvUuid = done.pvUuid;
      }
    } catch (e) {
      const error = journalError(e);
      // Never written once the agent is stopping (its lock may be released): the operation stays
      // interrupted and resumable. Otherwise recorded; kept in memory when the disk refuses it.
      if (!deps.stopSignal?.aborted || !isJournalClosed(e)) {
        journal.record({
          type: "action-error",
          op,
          index,
          at: now(),
          action: action.op,
          ...(action.device ? { device: action.device } : {}),
          error,
        });
        journal.record({ type: "operation-finish", op, at: now(), result: "failed", error });
      }
      throw stepFailure(e, op, index, action, steps);
    }
    const durationMs = Date.now() - started;
    appendOrFail(journal, {
      type: "action-finish",
      op,
      index,
      at: now(),
      action: action.op,
      ...deviceFields(action),
      ...(outcome === "skipped" ? { skipped: reason } : {}),
      ...(pvUuid ? { pvUuid } : {}),
      durationMs,
    });
    if (outcome === "done") applyEffect(action, state);
    steps.push({
      index,
      op: action.op,
      argv: action.argv,
      ...(action.device ? { device: action.device } : {}),
      outcome,
      reason,
      durationMs,
    });
    await deps.afterStep?.(index, action);
  }
  try {
    journal.append({ type: "operation-finish", op, at: now(), result: "succeeded" });
  } catch (e) {
    const message = `every step ran, but the end of the operation could not be recorded: ${e instanceof Error ? e.message : String(e)}`;
    journal.record({ type: "operation-finish", op, at: now(), result: "failed", error: { message } });
    throw new AgentError(500, "JournalWriteFailed", message, { operation: op, steps });
  }
  return {
    operation: op,
    kind: req.kind,
    node: fresh.node,
    approvedHash: req.approvedHash ?? fresh.hash,
    planHash: fresh.hash,
    ...(approval.resumes ? { resumed: approval.resumes } : {}),
    steps,
    blocked: fresh.blocked,
  };
}
