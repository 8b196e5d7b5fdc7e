import { z } from "zod";

/**
 * Reviewed changes (docs/operator.md): which plans the operator applies by itself and which wait
 * for a person, and the LVMNode status that shows a waiting plan. The rule itself is
 * src/planner/approval.ts.
 */

export const APPROVAL_POLICIES = ["Automatic", "Destructive", "Always"] as const;
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number];
export const DEFAULT_APPROVAL_POLICY: ApprovalPolicy = "Destructive";

/** The annotation that approves one pending plan of an LVMNode, by its hash (used once). */
export const APPROVE_ANNOTATION = "lvm.topolvm.io/approve";
/** The ClusterRole that grants the verb `approve` on lvmnodes. */
export const APPROVER_CLUSTER_ROLE = "pulumi-lvm-approver";

export const approvalPolicyField = z.enum(APPROVAL_POLICIES).optional().meta({
  description:
    "Which plans the operator applies without a person's approval (docs/operator.md, Reviewed changes). Automatic: every plan. Destructive: a plan that wipes a signature, adds a device to a volume group that exists, removes a volume group, thin pool or physical volume, or moves or reduces data waits for an approval; building a new group on blank devices, growing a pool and writing lvmd.yaml do not. Always: every plan with steps waits. @default Destructive",
});

const signatureSchema = z.strictObject({
  type: z.string(),
  uuid: z.string().optional(),
  label: z.string().optional(),
  offset: z.string().optional(),
});

export const pendingStepSchema = z.strictObject({
  op: z.string().meta({ description: "The step, e.g. wipefs, pvcreate, vgextend." }),
  command: z.string().meta({ description: "The exact command, as the agent runs it." }),
  volumeGroup: z.string().optional(),
  device: z.string().optional().meta({ description: "The device it writes to." }),
  deviceId: z.string().optional().meta({ description: "That device's stable identity." }),
  erases: z
    .array(signatureSchema)
    .max(32)
    .optional()
    .meta({ description: "Every signature the step erases: type, UUID, label, offset." }),
  why: z.string().optional().meta({ description: "Why this step needs an approval." }),
  loses: z.array(z.string()).max(1024).optional().meta({
    description:
      "The logical volumes the step removes with their data (a repair of a group that lost a disk), as volumeGroup/name, with the PersistentVolumeClaim that uses each when TopoLVM knows it: vg-data/lv1 (PVC shop/db-0).",
  }),
});

export const pendingApprovalSchema = z
  .strictObject({
    hash: z.string().meta({ description: "The plan's hash: what an approval names." }),
    policy: z.enum(APPROVAL_POLICIES),
    since: z.string().meta({ description: "When the plan started waiting (RFC 3339)." }),
    steps: z.array(pendingStepSchema).max(256).meta({ description: "Every step of the plan, in order." }),
    claims: z
      .array(z.string())
      .max(1024)
      .optional()
      .meta({ description: "The devices the plan claims, as volumeGroup: device (id)." }),
  })
  .meta({ description: "The plan waiting for an approval; approve it by its hash." });

export const approvalRecordSchema = z
  .strictObject({
    hash: z.string(),
    at: z.string().meta({ description: "When the approved plan was applied (RFC 3339)." }),
  })
  .meta({ description: "The last approval used: an approval is used once." });

export type PendingApproval = z.infer<typeof pendingApprovalSchema>;
export type PendingStep = z.infer<typeof pendingStepSchema>;
export type ApprovalRecord = z.infer<typeof approvalRecordSchema>;
