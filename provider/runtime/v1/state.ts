import { z } from "zod";
import {
  lvmNodeSpecSchema,
  nodeSelectorSchema,
  problemsFrom,
  type LVMNodeSpec,
  type ValidationProblem,
} from "../../../src/api";
import type { ClusterSettings } from "./cluster-agents";
import type { PlanSummary } from "./plan-summary";
import { unseal } from "./secrets";

/**
 * The v1 state of a NodeSetDisks resource: its inputs (as the component sends them, plus the plans
 * `check` adds) and its outputs. Read with zod because it comes from state files written by any
 * earlier version of the program. Sandbox mode (`agents`, the first v1 shape) and cluster mode
 * (`cluster`, added later as an optional input) are exclusive.
 */

export const agentSchema = z.strictObject({ url: z.string(), token: z.string(), ca: z.string().optional() });

const planSummarySchema = z.looseObject({
  hash: z.string(),
  selected: z.boolean(),
  steps: z.number(),
  blocked: z.array(z.string()),
}) as unknown as z.ZodType<PlanSummary>;

export const clusterSchema = z.strictObject({
  kubeconfig: z.string().min(1),
  context: z.string().min(1).optional(),
  serviceAccount: z.string().min(1),
  nodeSelector: nodeSelectorSchema.optional(),
});

export const inputsSchema = z
  .looseObject({
    nodeSetName: z.string(),
    namespace: z.string(),
    spec: lvmNodeSpecSchema,
    agents: z.record(z.string(), agentSchema).optional(),
    cluster: clusterSchema.optional(),
    plans: z.record(z.string(), planSummarySchema).optional(),
    inventories: z.record(z.string(), z.string()).optional(),
    pending: z.record(z.string(), z.string()).optional(),
  })
  .superRefine((inputs, ctx) => {
    if (inputs.agents && inputs.cluster)
      ctx.addIssue({
        code: "custom",
        path: ["cluster"],
        message: "cannot be set together with agents: pick sandbox mode (agents) or cluster mode (cluster)",
      });
    if (inputs.inventories && !inputs.agents)
      ctx.addIssue({
        code: "custom",
        path: ["inventories"],
        message: "needs agents (sandbox mode): each inventory is planned for the agent of its node",
      });
    if (!inputs.agents && !inputs.cluster)
      ctx.addIssue({
        code: "custom",
        path: ["agents"],
        message:
          "is required unless cluster is set (sandbox mode: node → agent URL and token; cluster mode: cluster)",
      });
  });

export interface Inputs {
  readonly nodeSetName: string;
  readonly namespace: string;
  readonly spec: LVMNodeSpec;
  /** Sandbox mode: node → its agent's URL and token. */
  readonly agents?: Readonly<
    Record<string, { readonly url: string; readonly token: string; readonly ca?: string }>
  >;
  /** Cluster mode: the agents are found through the Kubernetes API. */
  readonly cluster?: ClusterSettings;
  /** Set by check: node → the plan reviewed at preview. */
  readonly plans?: Readonly<Record<string, PlanSummary>>;
  /** Sandbox mode: node → `pulumi-lvm inventory`'s output on its host; plans are made from these (inventory-plans.ts). */
  readonly inventories?: Readonly<Record<string, string>>;
  /** Set by check: node → why its plan is not shown yet (its inventory is not in the state yet). */
  readonly pending?: Readonly<Record<string, string>>;
}

/** What one node's agent planned and applied (the `nodes` output). */
export interface NodeOutcome {
  readonly selected: boolean;
  /** The plan hash approved and applied. */
  readonly planHash: string;
  /** Steps the apply ran and skipped (already done); 0 and 0 when the node was converged. */
  readonly stepsDone: number;
  readonly stepsSkipped: number;
  /** The agent's operation id, when something was applied. */
  readonly operation?: string;
  /** What the planner would not do, and why. */
  readonly blocked: string[];
  /** LVMNode state as the agent last reported it (refresh). */
  readonly state?: string;
  /** Volume group → its state as the agent last reported it (refresh). */
  readonly volumeGroups?: Readonly<Record<string, VolumeGroupOutcome>>;
  /** The agent's last operation and its result (refresh), e.g. "apply 3f2a… succeeded". */
  readonly lastOperation?: string;
  /** Why the last apply failed on this node while others applied (the resource then holds a partial result). */
  readonly error?: string;
  /** Why nothing was applied on this node yet: its plan was not shown in a preview (inventory-plans.ts). */
  readonly pending?: string;
}

/** One volume group of a node at the last refresh. */
export interface VolumeGroupOutcome {
  /** Healthy, Degraded, Failed, Progressing, Missing or Pending. */
  readonly state: string;
  /** Its physical volumes (kernel names), sorted. */
  readonly members: string[];
  /** Why it is not Healthy: the steps still to do (with their lvm commands), blocked reasons, a failure. */
  readonly message?: string;
}

/** Parses stored or checked inputs (secrets taken as their plain values); problems carry property paths. */
export function parseInputs(
  value: unknown,
): { ok: true; inputs: Inputs } | { ok: false; problems: ValidationProblem[] } {
  const r = inputsSchema.safeParse(unseal(value), { reportInput: true });
  if (r.success) return { ok: true, inputs: r.data as Inputs };
  // A problem message quotes the value ("(got ...)"); under `agents` and `cluster` that value may be
  // a token or a kubeconfig.
  const secretive = (path: string) => /^(agents|cluster)($|\.)/.test(path);
  const problems = problemsFrom(r.error).map((p) =>
    secretive(p.path) ? { ...p, message: p.message.replace(/ \(got [\s\S]*\)$/, "") } : p,
  );
  return { ok: false, problems };
}

/** Parses inputs or throws an Error listing every problem. */
export function requireInputs(value: unknown, what: string): Inputs {
  const r = parseInputs(value);
  if (!r.ok)
    throw new Error(
      `${what}: the resource's state is not what the v1 runtime expects:\n  ${r.problems.map((p) => `${p.path}: ${p.message}`).join("\n  ")}`,
    );
  return r.inputs;
}
