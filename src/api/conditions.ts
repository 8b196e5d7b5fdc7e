import { z } from "zod";

/** A KEP-1623 condition (metav1.Condition), except that reason and message may be omitted, as in the proposal's examples. */
export const conditionSchema = z
  .strictObject({
    type: z
      .string()
      .max(316)
      .regex(
        /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/,
      )
      .meta({ description: "CamelCase condition type, e.g. VolumeGroupsHealthy." }),
    status: z.enum(["True", "False", "Unknown"]),
    observedGeneration: z
      .number()
      .int()
      .min(0)
      .optional()
      .meta({ description: "The .metadata.generation the condition was set from." }),
    lastTransitionTime: z.iso
      .datetime({
        offset: true,
        error: (i) =>
          `must be an RFC 3339 date-time with a time zone, such as "2044-10-22T16:29:24Z" (got ${JSON.stringify(i.input)})`,
      })
      .meta({ description: "When status last changed." }),
    reason: z
      .string()
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
      .optional()
      .meta({ description: "CamelCase reason for the last transition." }),
    message: z
      .string()
      .max(32768)
      .optional()
      .meta({ description: "What a person should know, naming nodes, devices and commands." }),
  })
  .meta({ description: "A KEP-1623 condition." });

export const conditionsSchema = z
  .array(conditionSchema)
  .max(32)
  .superRefine((conditions, ctx) => {
    const seen = new Map<string, number>();
    conditions.forEach((c, i) => {
      if (seen.has(c.type))
        ctx.addIssue({
          code: "custom",
          path: [i, "type"],
          message: `duplicate condition type "${c.type}" (also conditions[${seen.get(c.type)}])`,
        });
      else seen.set(c.type, i);
    });
  })
  .optional()
  .meta({
    description: "Standard conditions.",
    "x-kubernetes-list-type": "map",
    "x-kubernetes-list-map-keys": ["type"],
  });

export type Condition = z.infer<typeof conditionSchema>;

/** Condition types of an LVMNodeSet. */
export const NODESET_CONDITIONS = ["Ready", "LVMNodesReady", "ProviderReady"] as const;
/**
 * Condition types of an LVMNode: Ready (the summary, for kstatus), ProviderReady (the provider
 * reconciler), VolumeGroupsHealthy and DeviceClassesHealthy (reported by the node's agent),
 * Reconciled (the operator's LVMNode reconcile), ThinPoolNearlyFull (the operator, from the agent's
 * reported thin pool usage; not part of Ready).
 */
export const NODE_CONDITIONS = [
  "Ready",
  "ProviderReady",
  "VolumeGroupsHealthy",
  "DeviceClassesHealthy",
  "Reconciled",
  "ThinPoolNearlyFull",
  "AwaitingApproval",
] as const;
export type NodeConditionType = (typeof NODE_CONDITIONS)[number];

/** What each condition type says when True, from the proposal's workflow (docs/api.md lists them). */
export const CONDITION_MEANINGS: Record<(typeof NODESET_CONDITIONS)[number] | NodeConditionType, string> = {
  Ready:
    "The summary that kstatus-based tools read (kubectl wait, Argo CD, Flux, Pulumi's await), with the observedGeneration it was computed for: True when every other condition on the object is True and, on an LVMNode, its state is Ready. False or Unknown carries the first condition that is not True (its reason, and its type in the message).",
  LVMNodesReady: "Every LVMNode of the set is Ready.",
  ProviderReady: "The storage provider (TopoLVM) is installed and ready for the nodes.",
  VolumeGroupsHealthy: "Every volume group in spec exists on the node and is healthy (status.volumeGroups).",
  DeviceClassesHealthy:
    "Every device class in spec is set up (thin pool, lvmd configuration, StorageClass, VolumeSnapshotClass; status.deviceClasses).",
  Reconciled:
    "The operator's last reconcile got the node to its spec through the node's agent (reason InSync or Applied). False says why: PlanBlocked, AwaitingApproval, AgentUnavailable, AgentFailed, InvalidSpec, TeardownRefused, TeardownFailed.",
  ThinPoolNearlyFull:
    "A thin pool's data or metadata use is at or above spec.capacity.warningPercent (reason AboveWarning) or criticalPercent (AboveCritical); the message names each such pool with both percentages. False (BelowWarning) otherwise. Not part of Ready; each change of reason is also an Event.",
  AwaitingApproval:
    "A plan waits for a person's approval under the spec's approvalPolicy (status.pendingApproval holds it, with its hash); nothing of it was applied. False when nothing waits.",
};
