import type { PlanAction } from "../planner/types";
import { ActionRefusedError } from "./action-checks";
import { FileWriteError } from "./atomic-file";
import { DeviceIdentityError } from "./device-identity";
import { AgentError } from "./errors";
import type { Journal, JournalError, JournalRecord } from "./journal";
import { LvmCommandError } from "./lvm-runner";

/*
 * How an operation's steps are recorded (the journal's fields for a step, a step end that cannot be
 * written) and reported (each step's result, a failed step as an AgentError).
 */

export interface StepResult {
  readonly index: number;
  readonly op: PlanAction["op"];
  readonly argv: readonly string[];
  readonly device?: string;
  readonly outcome: "done" | "skipped";
  readonly reason: string;
  readonly durationMs: number;
}

/**
 * Journals a step's end. When that cannot be written, the step did run: the failure is recorded (in
 * memory at least) with the journal's error naming the file, and the operation fails with it.
 */
export function appendOrFail(journal: Journal, record: JournalRecord & { index: number }): void {
  try {
    journal.append(record);
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    journal.record({
      type: "operation-finish",
      op: record.op,
      at: new Date().toISOString(),
      result: "failed",
      error: { message: `step ${record.index + 1} ran, but its record could not be written: ${message}` },
    });
    throw new AgentError(
      500,
      "JournalWriteFailed",
      `step ${record.index + 1} ran, but its record could not be written: ${message}`,
      { operation: record.op },
    );
  }
}

export function isJournalClosed(e: unknown): boolean {
  return e instanceof FileWriteError && /journal is closed/.test(e.message);
}

export function deviceFields(action: PlanAction): { device?: string; deviceId?: string } {
  return {
    ...(action.device ? { device: action.device } : {}),
    ...(action.deviceId ? { deviceId: action.deviceId } : {}),
  };
}

export function journalError(e: unknown): JournalError {
  if (e instanceof LvmCommandError)
    return { message: e.message, argv: e.argv, exitCode: e.exitCode, stderr: e.stderr };
  return { message: e instanceof Error ? e.message : String(e) };
}

/** A failed step as the AgentError the caller gets: what failed, and the steps done before it. */
export function stepFailure(
  e: unknown,
  op: string,
  index: number,
  action: PlanAction,
  steps: StepResult[],
): AgentError {
  const common = {
    operation: op,
    failedStep: {
      index,
      op: action.op,
      argv: action.argv,
      ...(action.device ? { device: action.device } : {}),
    },
    steps,
  };
  if (e instanceof DeviceIdentityError)
    return new AgentError(409, "DeviceChanged", `step ${index + 1} (${action.op}) not run: ${e.message}`, {
      ...common,
      device: e.device,
      expected: e.expected,
      found: e.found,
    });
  if (e instanceof ActionRefusedError)
    return new AgentError(
      409,
      "StepRefused",
      `step ${index + 1} (${action.op}) not run: ${e.message}`,
      common,
    );
  if (e instanceof LvmCommandError)
    return new AgentError(500, "CommandFailed", `step ${index + 1} (${action.op}) failed: ${e.message}`, {
      ...common,
      command: { argv: e.argv, exitCode: e.exitCode, stderr: e.stderr },
    });
  return new AgentError(
    500,
    "StepFailed",
    `step ${index + 1} (${action.op}) failed: ${e instanceof Error ? e.message : String(e)}`,
    common,
  );
}
