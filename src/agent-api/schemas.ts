import { z } from "zod";
import { lvmNodeSpecSchema, lvmNodeStatusSchema, resourceName } from "../api";
import { checkDeviceNames } from "./device-names";

/**
 * The request and response bodies of the agent's API. Requests are validated with these at the
 * edge (strict: unknown fields are errors with their paths); docs/agent-openapi.json is generated
 * from them (src/agent/openapi.ts).
 */

export const agentSpecSchema = lvmNodeSpecSchema.superRefine(checkDeviceNames);

export const planHashSchema = z
  .string()
  .regex(/^[A-Za-z0-9:_-]{1,128}$/, { error: "must be a plan hash as returned by POST /v1/plan" })
  .meta({ description: "The `hash` of the plan the caller reviewed (POST /v1/plan)." });

export const planRequestSchema = z
  .strictObject({ spec: agentSpecSchema })
  .meta({ id: "PlanRequest", description: "Plan this node against a spec: a dry run that writes nothing." });

export const applyRequestSchema = z.strictObject({ spec: agentSpecSchema, planHash: planHashSchema }).meta({
  id: "ApplyRequest",
  description: "Execute the plan for this spec, if it is still the plan the caller saw.",
});

export const teardownRequestSchema = z
  .strictObject({
    spec: agentSpecSchema,
    volumeGroup: resourceName("Tear down this volume group of the spec.").optional(),
    deviceClass: resourceName(
      "Tear down the volume group of this device class (refused when shared).",
    ).optional(),
    force: z.boolean().optional().meta({
      description:
        "Remove volume groups that still hold other logical volumes (destroys them). @default false",
    }),
    planHash: planHashSchema
      .optional()
      .meta({ description: "When given, the teardown runs only if its plan still has this hash." }),
    dryRun: z
      .boolean()
      .optional()
      .meta({ description: "Return the teardown plan without executing it. @default false" }),
  })
  .superRefine((r, ctx) => {
    if (r.volumeGroup !== undefined && r.deviceClass !== undefined)
      ctx.addIssue({
        code: "custom",
        path: ["deviceClass"],
        message: "give volumeGroup or deviceClass, not both",
      });
  })
  .meta({
    id: "TeardownRequest",
    description:
      "Remove our thin pools, volume group(s) and PV labels. Neither volumeGroup nor deviceClass: every volume group of the spec.",
  });

export const errorResponseSchema = z
  .object({
    error: z.looseObject({
      code: z.string().meta({
        description: "Stable machine-readable code, e.g. InvalidBody, PlanChanged, VolumeGroupInUse.",
      }),
      message: z.string(),
      problems: z
        .array(z.object({ path: z.string(), message: z.string() }))
        .optional()
        .meta({ description: "Field paths and what is wrong (400)." }),
      plan: z.unknown().optional().meta({ description: "The fresh plan (409 PlanChanged)." }),
      volumes: z
        .array(
          z.object({ volumeGroup: z.string(), name: z.string(), attributes: z.string(), size: z.number() }),
        )
        .optional()
        .meta({ description: "Logical volumes in the way (409 VolumeGroupInUse)." }),
    }),
  })
  .meta({ id: "Error" });

const planActionSchema = z.looseObject({
  op: z.string(),
  argv: z.array(z.string()),
  volumeGroup: z.string().optional(),
  device: z.string().optional(),
  deviceId: z.string().optional(),
  reason: z.string(),
  destructive: z.boolean().optional(),
});

export const nodePlanSchema = z
  .looseObject({
    node: z.string(),
    selected: z.boolean(),
    volumeGroups: z.array(z.unknown()),
    actions: z.array(planActionSchema),
    blocked: z.array(
      z.object({ volumeGroup: z.string().optional(), device: z.string().optional(), reason: z.string() }),
    ),
    lvmd: z.object({ "device-classes": z.array(z.unknown()) }),
    hash: z.string(),
  })
  .meta({ id: "NodePlan", description: "The plan (docs/plan-format.md)." });

export const operationResultSchema = z
  .object({
    operation: z.string(),
    kind: z.enum(["apply", "teardown"]),
    node: z.string(),
    approvedHash: z.string(),
    planHash: z.string(),
    resumed: z.string().optional().meta({ description: "The interrupted operation this one resumed." }),
    steps: z.array(
      z.object({
        index: z.number(),
        op: z.string(),
        argv: z.array(z.string()),
        device: z.string().optional(),
        outcome: z.enum(["done", "skipped"]),
        reason: z.string(),
        durationMs: z.number(),
      }),
    ),
    blocked: z.array(z.unknown()),
  })
  .meta({ id: "OperationResult" });

export const lastOperationSchema = z
  .object({
    operation: z.string(),
    kind: z.enum(["apply", "teardown"]),
    result: z.enum(["running", "succeeded", "failed", "interrupted", "superseded"]),
    startedAt: z.string(),
    finishedAt: z.string().optional(),
    planHash: z.string(),
    stepsDone: z.number(),
    stepsSkipped: z.number(),
    stepCount: z.number(),
    error: z
      .object({
        message: z.string(),
        step: z.number().optional(),
        action: z.string().optional(),
        device: z.string().optional(),
        argv: z.array(z.string()).optional(),
        exitCode: z.number().nullable().optional(),
        stderr: z.string().optional(),
      })
      .optional(),
  })
  .meta({ description: "What the journal says happened last." });

export const statusResponseSchema = z
  .object({
    node: z.string(),
    status: lvmNodeStatusSchema,
    lastOperation: lastOperationSchema.optional(),
  })
  .meta({ id: "StatusResponse" });

export type ApplyRequest = z.infer<typeof applyRequestSchema>;
export type TeardownRequest = z.infer<typeof teardownRequestSchema>;
export type LastOperation = z.infer<typeof lastOperationSchema>;
