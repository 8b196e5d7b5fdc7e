import type { NodePlan, PlanAction, WipeSignature } from "../planner/types";
import { devicesOf } from "./action-checks";
import { AgentError } from "./errors";
import type { ApprovedDestruction, ApprovedDevice, OperationKind, OperationSummary } from "./journal";

/*
 * Which plan an operation may execute (the approval rule of runOperation, src/agent/apply.ts), and
 * what an approval records: the devices, destructive steps and claims the caller approved.
 */

/** Every device a plan claims or writes to, with the identity the plan gives it. */
export function approvedDevicesOf(plan: NodePlan): ApprovedDevice[] {
  const ids = deviceIdsOf(plan);
  const knames = new Set<string>([...ids.keys()]);
  for (const action of plan.actions) for (const d of devicesOf(action)) knames.add(d);
  return [...knames].sort().map((kname) => ({ kname, ...(ids.get(kname) ? { id: ids.get(kname)! } : {}) }));
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

export interface Approval {
  readonly devices: ApprovedDevice[];
  readonly destructive: ApprovedDestruction[];
  readonly claimed: string[];
  readonly claimedByVolumeGroup: Record<string, string[]>;
  readonly resumes?: string;
}

/** What of an operation's request decides its approval. */
export interface ApprovalRequest {
  readonly kind: OperationKind;
  readonly specDigest: string;
  /** undefined: approve the fresh plan. */
  readonly approvedHash: string | undefined;
}

/**
 * What an operation may execute: the fresh plan when its hash is the one the caller approved (or
 * none was given); else, when it resumes the interrupted operation `interrupted` (same kind, approved
 * hash and spec), the fresh plan only if it writes to no device, destroys nothing and leaves out no
 * claimed device that the interrupted operation's approval did not cover. Otherwise 409 PlanChanged
 * with the fresh plan. The approval returned is what the operation journals.
 */
export function approve(
  interrupted: OperationSummary | undefined,
  fresh: NodePlan,
  req: ApprovalRequest,
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

/** The identity the step itself gives each of its devices (deviceId for device, deviceIds for devices). */
export function actionDeviceIds(action: PlanAction): Map<string, string> {
  const ids = new Map<string, string>();
  if (action.device && action.deviceId) ids.set(action.device, action.deviceId);
  action.devices?.forEach((d, i) => {
    const id = action.deviceIds?.[i];
    if (id) ids.set(d, id);
  });
  return ids;
}

/** Device path → identity, from the plan's claims (by path and kname) and its steps. */
export function deviceIdsOf(plan: NodePlan): Map<string, string> {
  const ids = new Map<string, string>();
  for (const vg of plan.volumeGroups)
    for (const c of [...vg.claimed, ...(vg.leaving ?? [])]) {
      ids.set(c.kname, c.id);
      if (c.path) ids.set(c.path, c.id);
    }
  for (const a of plan.actions) for (const [d, id] of actionDeviceIds(a)) if (!ids.has(d)) ids.set(d, id);
  return ids;
}
