import { randomUUID } from "node:crypto";
import type { NodeInventory } from "../inventory/types";
import type { NodePlan, PlanAction, WipeSignature } from "../planner/types";
import {
  ActionRefusedError,
  applyEffect,
  decide,
  devicesOf,
  stateFromInventory,
  type LvmState,
} from "./action-checks";
import { DeviceIdentityError, verifyDeviceIdentity, type IdentityProbeDeps } from "./device-identity";
import { AgentError } from "./errors";
import type {
  ApprovedDestruction,
  ApprovedDevice,
  Journal,
  JournalError,
  JournalRecord,
  OperationKind,
  OperationSummary,
} from "./journal";
import { FileWriteError, writeFileAtomic } from "./atomic-file";
import { readPvUuid } from "./pv-label";
import { ALL_VG_NAMES_ARGV, LvmCommandError, type Runner } from "./lvm-runner";

export interface OperationDeps {
  readonly run: Runner;
  /** Fresh inventory of this node's devices (re-discovered before every operation). */
  readonly discover: () => Promise<NodeInventory>;
  readonly journal: Journal;
  /** Filesystem seams of the identity probe; its runner is `run`. @default the real /dev and /sys */
  readonly identity?: Omit<IdentityProbeDeps, "run">;
  /** Where lvmd.yaml goes. */
  readonly lvmdConfigPath: string;
  /** @default () => new Date() */
  readonly clock?: () => Date;
  /** @default crypto.randomUUID */
  readonly newId?: () => string;
  /** Between steps: when aborted, the operation stops before its next step and stays resumable. */
  readonly stopSignal?: AbortSignal;
  /** When aborted, the running command is killed (with its process group): the shutdown grace ran out. */
  readonly killSignal?: AbortSignal;
  /** Test-only seam: awaited after each step (index 0-based) completes, e.g. to pause for a kill -9. */
  readonly afterStep?: (index: number, action: PlanAction) => Promise<void>;
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

export interface StepResult {
  readonly index: number;
  readonly op: PlanAction["op"];
  readonly argv: readonly string[];
  readonly device?: string;
  readonly outcome: "done" | "skipped";
  readonly reason: string;
  readonly durationMs: number;
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
  await checkVolumeGroupNames(deps, inventory, fresh);

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
  const approvedIds = new Map(approval.devices.map((d) => [canon(state, d.kname), d.id]));
  const freshIds = new Map([...deviceIdsOf(fresh)].map(([d, id]) => [canon(state, d), id]));
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
        const ownIds = actionDeviceIds(action);
        for (const device of devicesOf(action)) {
          const expected = [
            ...optional(ownIds.get(device)),
            ...optional(approvedIds.get(canon(state, device))),
            ...optional(freshIds.get(canon(state, device))),
          ];
          await verifyDeviceIdentity({ ...deps.identity, run: deps.run }, device, expected);
        }
        journal.append({
          type: "action-start",
          op,
          index,
          at: now(),
          action: action.op,
          argv: action.argv,
          ...deviceFields(action),
        });
        const done = await executeChecked(deps, action, wipeScope);
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
      throw failure(e, op, index, action, steps);
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

/** Every device a plan claims or writes to, with the identity the plan gives it. */
export function approvedDevicesOf(plan: NodePlan): ApprovedDevice[] {
  const ids = deviceIdsOf(plan);
  const knames = new Set<string>([...ids.keys()]);
  for (const action of plan.actions) for (const d of devicesOf(action)) knames.add(d);
  return [...knames].sort().map((kname) => ({ kname, ...(ids.get(kname) ? { id: ids.get(kname)! } : {}) }));
}

/* ------------------------------------------------------------------------------ helpers ---- */

/**
 * Journals a step's end. When that cannot be written, the step did run: the failure is recorded (in
 * memory at least) with the journal's error naming the file, and the operation fails with it.
 */
function appendOrFail(journal: Journal, record: JournalRecord & { index: number }): void {
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

function isJournalClosed(e: unknown): boolean {
  return e instanceof FileWriteError && /journal is closed/.test(e.message);
}

/**
 * A confined agent (--devices) sees only its own devices; a volume group it creates must not take a
 * name that exists on other devices of the machine (lvm would then refuse both). Only the names are
 * read, unconfined.
 */
async function checkVolumeGroupNames(
  deps: OperationDeps,
  inventory: NodeInventory,
  plan: NodePlan,
): Promise<void> {
  const creates = plan.actions.filter((a) => a.op === "vgcreate" && a.volumeGroup).map((a) => a.volumeGroup!);
  const ours = new Set(inventory.vgs.map((v) => v.name));
  const wanted = creates.filter((n) => !ours.has(n));
  if (!wanted.length) return;
  let names: string[];
  try {
    const out = await deps.run(ALL_VG_NAMES_ARGV, { unconfined: true });
    const parsed = JSON.parse(out.stdout) as { report?: Array<{ vg?: Array<{ vg_name?: string }> }> };
    names = (parsed.report ?? []).flatMap((r) => r.vg ?? []).map((v) => v.vg_name ?? "");
  } catch (e) {
    throw new AgentError(
      500,
      "DiscoveryFailed",
      `cannot list the volume group names on this machine before creating ${wanted.join(", ")}: ${e instanceof Error ? e.message : String(e)}`,
    );
  }
  const taken = wanted.filter((n) => names.includes(n));
  if (taken.length)
    throw new AgentError(
      409,
      "VolumeGroupNameTaken",
      `volume group ${taken.join(", ")} already exists on this machine, on devices outside this agent's --devices; lvm would refuse both groups. Choose another name`,
      { volumeGroups: taken },
    );
}

/** The destructive steps of a plan, with what each destroys. */
export function destructiveStepsOf(plan: NodePlan): ApprovedDestruction[] {
  return plan.actions
    .filter((a) => a.destructive)
    .map((a) => ({
      op: a.op,
      argv: a.argv,
      ...(a.device ? { device: a.device } : {}),
      ...(a.signatures ? { signatures: a.signatures } : {}),
    }));
}

/** The devices a plan claims for its volume groups (members staying and devices joining). */
export function claimedDevicesOf(plan: NodePlan): string[] {
  return [...new Set(plan.volumeGroups.flatMap((vg) => vg.claimed.map((c) => c.path ?? c.kname)))].sort();
}

/** The devices a plan claims, per volume group. */
export function claimedByVolumeGroupOf(plan: NodePlan): Record<string, string[]> {
  return Object.fromEntries(
    plan.volumeGroups.map((vg) => [vg.name, [...new Set(vg.claimed.map((c) => c.path ?? c.kname))].sort()]),
  );
}

/** A destructive step of the fresh plan the approved plan also had, destroying no more than it did. */
function approvedDestruction(step: ApprovedDestruction, approved: readonly ApprovedDestruction[]): boolean {
  const same = (a: WipeSignature, b: WipeSignature) =>
    a.type === b.type && a.uuid === b.uuid && a.label === b.label && a.offset === b.offset;
  return approved.some(
    (a) =>
      a.op === step.op &&
      JSON.stringify(a.argv) === JSON.stringify(step.argv) &&
      (step.signatures ?? []).every((s) => (a.signatures ?? []).some((t) => same(s, t))) &&
      (step.signatures !== undefined || a.signatures === undefined),
  );
}

interface Approval {
  readonly devices: ApprovedDevice[];
  readonly destructive: ApprovedDestruction[];
  readonly claimed: string[];
  readonly claimedByVolumeGroup: Record<string, string[]>;
  readonly resumes?: string;
}

function approve(
  interrupted: OperationSummary | undefined,
  fresh: NodePlan,
  req: OperationRequest,
): Approval {
  if (req.approvedHash === undefined || fresh.hash === req.approvedHash)
    return {
      devices: approvedDevicesOf(fresh),
      destructive: destructiveStepsOf(fresh),
      claimed: claimedDevicesOf(fresh),
      claimedByVolumeGroup: claimedByVolumeGroupOf(fresh),
    };
  const resumable =
    interrupted &&
    interrupted.start.kind === req.kind &&
    interrupted.start.approvedHash === req.approvedHash &&
    interrupted.start.specDigest === req.specDigest;
  if (!resumable)
    throw new AgentError(
      409,
      "PlanChanged",
      `the node changed since the plan was made: approved plan ${req.approvedHash}, plan now ${fresh.hash}; review the fresh plan and apply it with its hash`,
      {
        plan: fresh,
      },
    );
  const approved = new Set(interrupted.start.devices.map((d) => d.kname));
  const unapproved = [...new Set(fresh.actions.flatMap(devicesOf))].filter((d) => !approved.has(d));
  if (unapproved.length)
    throw new AgentError(
      409,
      "PlanChanged",
      `cannot resume interrupted operation ${interrupted.start.op}: the plan now writes to ${unapproved.join(", ")}, which the approved plan did not include; review the fresh plan and apply it with its hash`,
      { plan: fresh, interruptedOperation: interrupted.start.op, unapprovedDevices: unapproved },
    );
  // A wipe (or vgremove --force) the approved plan did not have, or of a signature it did not list:
  // the device changed since (e.g. a filesystem made on it while the agent was down). Never resumed.
  const approvedDestructive = interrupted.start.destructive ?? [];
  const unapprovedSteps = destructiveStepsOf(fresh).filter(
    (s) => !approvedDestruction(s, approvedDestructive),
  );
  if (unapprovedSteps.length)
    throw new AgentError(
      409,
      "PlanChanged",
      `cannot resume interrupted operation ${interrupted.start.op}: the plan now has destructive steps the approved plan did not (${unapprovedSteps.map((s) => s.argv.join(" ")).join("; ")}); review the fresh plan and apply it with its hash`,
      {
        plan: fresh,
        interruptedOperation: interrupted.start.op,
        unapprovedDevices: [...new Set(unapprovedSteps.map((s) => s.device ?? s.argv.at(-1)!))],
        unapprovedSteps,
      },
    );
  // A device the approved plan put in a volume group that the fresh plan leaves out (e.g. the PV the
  // agent created just before it died, now an orphan it cannot prove is its own): the group would be
  // smaller than approved. Never resumed silently.
  const freshClaimed = new Set(claimedDevicesOf(fresh));
  const dropped = (interrupted.start.claimed ?? []).filter((d) => !freshClaimed.has(d));
  if (dropped.length)
    throw new AgentError(
      409,
      "PlanChanged",
      `cannot resume interrupted operation ${interrupted.start.op}: the plan now leaves out ${dropped.join(", ")}, which the approved plan put in a volume group; review the fresh plan (its exclusions say why) and apply it with its hash`,
      { plan: fresh, interruptedOperation: interrupted.start.op, droppedDevices: dropped },
    );
  return {
    devices: [...interrupted.start.devices],
    destructive: [...approvedDestructive],
    claimed: [...(interrupted.start.claimed ?? claimedDevicesOf(fresh))],
    claimedByVolumeGroup: Object.fromEntries(
      Object.entries(interrupted.start.claimedByVolumeGroup ?? claimedByVolumeGroupOf(fresh)).map(
        ([vg, d]) => [vg, [...d]],
      ),
    ),
    resumes: interrupted.start.op,
  };
}

/**
 * Runs one step; when its command timed out, the outcome is unknown (the command may have done its
 * work before it was killed): the node is re-discovered and the step's postcondition re-checked.
 */
async function executeChecked(
  deps: OperationDeps,
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
async function execute(
  deps: OperationDeps,
  action: PlanAction,
): Promise<{ skipped?: string; pvUuid?: string }> {
  if (action.op === "write-lvmd-config") {
    if (!action.file) throw new ActionRefusedError(action, "carries no file content");
    if (action.file.path !== deps.lvmdConfigPath)
      throw new ActionRefusedError(
        action,
        `writes ${action.file.path}, but this agent's lvmd.yaml is ${deps.lvmdConfigPath}`,
      );
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
    throw e;
  }
  if (action.op !== "pvcreate" || !action.device) return {};
  const uuid = await (deps.identity?.readPvUuid ?? readPvUuid)(action.device);
  return uuid ? { pvUuid: uuid } : {};
}

/** The identity the step itself gives each of its devices (deviceId for device, deviceIds for devices). */
function actionDeviceIds(action: PlanAction): Map<string, string> {
  const ids = new Map<string, string>();
  if (action.device && action.deviceId) ids.set(action.device, action.deviceId);
  action.devices?.forEach((d, i) => {
    const id = action.deviceIds?.[i];
    if (id) ids.set(d, id);
  });
  return ids;
}

/** Device path → identity, from the plan's claims (by path and kname) and its steps. */
function deviceIdsOf(plan: NodePlan): Map<string, string> {
  const ids = new Map<string, string>();
  for (const vg of plan.volumeGroups)
    for (const c of [...vg.claimed, ...(vg.leaving ?? [])]) {
      ids.set(c.kname, c.id);
      if (c.path) ids.set(c.path, c.id);
    }
  for (const a of plan.actions) for (const [d, id] of actionDeviceIds(a)) if (!ids.has(d)) ids.set(d, id);
  return ids;
}

function canon(state: LvmState, device: string): string {
  return state.aliases.get(device) ?? device;
}

function optional<T>(value: T | undefined): T[] {
  return value === undefined ? [] : [value];
}

function deviceFields(action: PlanAction): { device?: string; deviceId?: string } {
  return {
    ...(action.device ? { device: action.device } : {}),
    ...(action.deviceId ? { deviceId: action.deviceId } : {}),
  };
}

function journalError(e: unknown): JournalError {
  if (e instanceof LvmCommandError)
    return { message: e.message, argv: e.argv, exitCode: e.exitCode, stderr: e.stderr };
  return { message: e instanceof Error ? e.message : String(e) };
}

function failure(e: unknown, op: string, index: number, action: PlanAction, steps: StepResult[]): AgentError {
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
