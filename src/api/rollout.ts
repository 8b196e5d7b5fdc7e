import { z } from "zod";
import { describeValue } from "./errors";

/**
 * How a template change of an LVMNodeSet reaches its nodes (spec.rollout), the per-node and per-set
 * rollout status, and a volume group's device discovery policy. Defaults are read through
 * `rolloutPolicyOf` and `discoveryPolicyOf`; docs/operator.md says why they are what they are.
 */

export const ROLLOUT_DEFAULTS = { maxConcurrent: "10%", pauseOnFailure: true } as const;

const PERCENT = /^([1-9][0-9]?|100)%$/;

export const maxConcurrentSchema = z
  .union(
    [
      z
        .number({
          error: (i) =>
            `must be a whole number of nodes or a percentage like "10%" (got ${describeValue(i.input)})`,
        })
        .int({ error: (i) => `must be a whole number of nodes (got ${String(i.input)})` })
        .min(1, { error: (i) => `must be at least 1 (got ${String(i.input)})` }),
      z.string().regex(PERCENT, {
        error: (i) => `must be a percentage between 1% and 100% (got ${describeValue(i.input)})`,
      }),
    ],
    {
      error: (i) =>
        `must be a whole number of nodes (at least 1) or a percentage like "10%" (got ${describeValue(i.input)})`,
    },
  )
  .meta({
    "x-kubernetes-int-or-string": true,
    description: `How many selected nodes may be updating to a new template at once: a number, or a percentage of the selected nodes (rounded up, so at least 1). @default "${ROLLOUT_DEFAULTS.maxConcurrent}" @example 2`,
  });

export const rolloutSchema = z
  .strictObject({
    maxConcurrent: maxConcurrentSchema.optional(),
    pauseOnFailure: z
      .boolean()
      .optional()
      .meta({
        description: `Stop giving the new template to more nodes once a node fails to apply it (condition RolloutPaused), until the set changes again or the annotation lvm.topolvm.io/rollout-resume gets a new value. @default ${ROLLOUT_DEFAULTS.pauseOnFailure}`,
      }),
  })
  .meta({
    "x-kubernetes-validations": [
      {
        rule: "!has(self.maxConcurrent) || (type(self.maxConcurrent) == int ? self.maxConcurrent >= 1 : self.maxConcurrent.matches('^([1-9][0-9]?|100)%$'))",
        message: 'maxConcurrent must be at least 1, or a percentage between "1%" and "100%"',
      },
    ],
    description:
      "How a change of the template reaches the nodes: a few at a time, in node name order, each done once its LVMNode applied it and is Ready. A new set, and a node that joins the set, get the template at once.",
  });

export type Rollout = z.infer<typeof rolloutSchema>;

/** The annotation on an LVMNodeSet whose every new value resumes a paused rollout once. */
export const ROLLOUT_RESUME_ANNOTATION = "lvm.topolvm.io/rollout-resume";
/** The annotation on an LVMNode: the template generation of its set that its spec carries. */
export const TEMPLATE_GENERATION_ANNOTATION = "lvm.topolvm.io/template-generation";

export interface RolloutPolicy {
  readonly maxConcurrent: number | string;
  readonly pauseOnFailure: boolean;
}

export function rolloutPolicyOf(rollout: Rollout | undefined): RolloutPolicy {
  return {
    maxConcurrent: rollout?.maxConcurrent ?? ROLLOUT_DEFAULTS.maxConcurrent,
    pauseOnFailure: rollout?.pauseOnFailure ?? ROLLOUT_DEFAULTS.pauseOnFailure,
  };
}

/** maxConcurrent as a number of nodes out of `total`: a percentage rounds up, and is at least 1. */
export function maxConcurrentOf(maxConcurrent: number | string, total: number): number {
  if (typeof maxConcurrent === "number") return maxConcurrent;
  const percent = Number(maxConcurrent.slice(0, -1));
  return Math.max(1, Math.ceil((total * percent) / 100));
}

const generation = (description: string) => z.number().int().min(0).optional().meta({ description });

/** The set's rollout summary (status.rollout). */
export const rolloutStatusSchema = z
  .strictObject({
    templateGeneration: generation(
      "The set's metadata.generation at which its template last changed: the template being rolled out.",
    ),
    templateHash: z.string().max(64).optional().meta({ description: "Digest of that template." }),
    updatedNodes: generation("Selected nodes that applied this template and are Ready."),
    totalNodes: generation("Selected nodes."),
    updating: z
      .array(z.string())
      .max(100)
      .optional()
      .meta({ description: "Nodes given this template that have not yet applied it (at most 100)." }),
    resumed: z
      .string()
      .max(253)
      .optional()
      .meta({ description: "The last value of the rollout-resume annotation acted on." }),
    skipped: z
      .array(z.string())
      .max(100)
      .optional()
      .meta({ description: "Nodes whose failure a resume passed over for this template." }),
  })
  .meta({ description: "How far the rollout of the current template is." });

export type RolloutStatus = z.infer<typeof rolloutStatusSchema>;

/** The LVMNode's own record (status.appliedTemplateGeneration). */
export const appliedTemplateGenerationSchema = generation(
  "The template generation of the node's LVMNodeSet that the node last applied (its agent synced it).",
);

/* ------------------------------------------------------------------------- discovery ---- */

export const DISCOVERY_POLICIES = ["Static", "Dynamic"] as const;

export const deviceDiscoveryPolicySchema = z.enum(DISCOVERY_POLICIES).meta({
  description:
    'Dynamic: a device that appears later and matches the selector joins the group (in a plan, which the approval policy may hold). Static: once the group exists, only its physical volumes are used; a device that appears later is excluded with the reason "appeared after the group was built; discovery is Static". @default "Dynamic"',
});

export function discoveryPolicyOf(vg: {
  deviceDiscoveryPolicy?: "Static" | "Dynamic";
}): "Static" | "Dynamic" {
  return vg.deviceDiscoveryPolicy ?? "Dynamic";
}
