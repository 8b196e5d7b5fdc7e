import { DEFAULT_APPROVAL_POLICY, type ApprovalPolicy, type LVMNodeSpec, type PendingStep } from "../../api";
import type { NodePlanResponse } from "../../agent-client/agent-client";
import { stepsNeedingApproval } from "../../planner/approval";
import type { ActionOp, NodePlan, WipeSignature } from "../../planner/types";

/**
 * A plan that waits for a person (docs/operator.md, Reviewed changes), as the LVMNode's status
 * shows it: its hash, every step with its device and the signatures it erases (why it waits, for
 * those that do), and the devices it claims. Pure.
 */
export interface WaitingPlan {
  readonly node: string;
  readonly hash: string;
  readonly policy: ApprovalPolicy;
  readonly steps: readonly PendingStep[];
  readonly claims: readonly string[];
  /** How many steps need the approval. */
  readonly held: number;
}

type Claim = { kname?: string; path?: string; id?: string; member?: boolean; adopted?: boolean };
type Group = { name?: string; exists?: boolean; claimed?: Claim[] };

/** The plan waiting for an approval under the spec's policy, or undefined: it may be applied. */
export function waitingPlan(
  plan: NodePlanResponse,
  spec: LVMNodeSpec,
  claimedBefore?: ReadonlySet<string>,
): WaitingPlan | undefined {
  const policy = spec.approvalPolicy ?? DEFAULT_APPROVAL_POLICY;
  const groups = plan.volumeGroups as Group[];
  const view = {
    actions: plan.actions as unknown as NodePlan["actions"],
    volumeGroups: groups.map((g) => ({ name: g.name ?? "", exists: g.exists })),
  };
  const held = stepsNeedingApproval(view, policy, withOwnPvs(groups, claimedBefore));
  if (held.length === 0) return undefined;
  const why = new Map(held.map((h) => [h.index, h.why]));
  const steps = plan.actions.map((a, i): PendingStep => {
    const signatures = (a as { signatures?: WipeSignature[] }).signatures;
    const lost = (a as { lostVolumes?: string[] }).lostVolumes;
    const command = a.op === "write-lvmd-config" ? `write ${filePath(a)}` : a.argv.join(" ");
    return {
      op: a.op as ActionOp,
      command,
      ...(a.volumeGroup ? { volumeGroup: a.volumeGroup } : {}),
      ...(a.device ? { device: a.device } : {}),
      ...(a.deviceId ? { deviceId: a.deviceId } : {}),
      ...(signatures?.length ? { erases: signatures.map(signature) } : {}),
      ...(why.has(i) ? { why: why.get(i)! } : {}),
      ...(lost?.length ? { loses: [...lost] } : {}),
    };
  });
  const claims = groups.flatMap((g) =>
    (g.claimed ?? [])
      .filter((c) => !c.member)
      .map((c) => `${g.name}: ${c.path ?? c.kname}${c.id ? ` (${c.id})` : ""}`),
  );
  return { node: plan.node, hash: plan.hash, policy, steps, claims, held: held.length };
}

/**
 * The devices the node's groups held before, and every orphan physical volume the node's agent
 * created itself (a claim the plan marks `adopted`, from the agent's journal): one of those joining
 * back (after an out-of-band vgreduce, or an apply cut off between pvcreate and vgextend) completes a
 * change that was applied before; it is not a device nobody reviewed. Without it, an out-of-band
 * vgreduce that landed between a reconcile's plan and its status read dropped the device from the
 * status, and the repair then waited for an approval.
 */
function withOwnPvs(groups: readonly Group[], claimedBefore: ReadonlySet<string> = new Set()): Set<string> {
  const known = new Set(claimedBefore);
  for (const c of groups.flatMap((g) => g.claimed ?? []))
    if (c.adopted) for (const name of [c.path, c.kname, c.id]) if (name) known.add(name);
  return known;
}

/** "wipefs /dev/loop9 (xfs 5e1c…); pvcreate /dev/loop9", the held steps for a message. */
export function describeWaiting(w: WaitingPlan): string {
  const steps = w.steps
    .filter((s) => s.why)
    .map((s) => {
      const erases = s.erases?.map((e) =>
        [e.type, e.uuid && `UUID ${e.uuid}`, e.label && `label ${e.label}`].filter(Boolean).join(" "),
      );
      const loses = s.loses?.length ? ` (loses ${s.loses.join(", ")})` : "";
      return `${s.command}${erases?.length ? ` (erases ${erases.join(", ")})` : ""}${loses}: ${s.why}`;
    });
  return `plan ${w.hash} waits for an approval (approvalPolicy ${w.policy}): ${steps.join("; ")}`;
}

function signature(s: WipeSignature): WipeSignature {
  return {
    type: s.type,
    ...(s.uuid ? { uuid: s.uuid } : {}),
    ...(s.label ? { label: s.label } : {}),
    ...(s.offset ? { offset: s.offset } : {}),
  };
}

function filePath(a: unknown): string {
  return (a as { file?: { path?: string } }).file?.path ?? "lvmd.yaml";
}
