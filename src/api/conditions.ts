import { z } from "zod";

/** A KEP-1623 condition (metav1.Condition), except that reason and message may be omitted, as in the proposal's examples. */
export const conditionSchema = z
  .strictObject({
    type: z
      .string()
      .max(316)
      .regex(/^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$/)
      .meta({ description: "CamelCase condition type, e.g. VolumeGroupsHealthy." }),
    status: z.enum(["True", "False", "Unknown"]),
    observedGeneration: z.number().int().min(0).optional().meta({ description: "The .metadata.generation the condition was set from." }),
    lastTransitionTime: z.iso.datetime({ offset: true }).meta({ description: "When status last changed." }),
    reason: z
      .string()
      .max(1024)
      .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
      .optional()
      .meta({ description: "CamelCase reason for the last transition." }),
    message: z.string().max(32768).optional().meta({ description: "What a person should know, naming nodes, devices and commands." }),
  })
  .meta({ description: "A KEP-1623 condition." });

export const conditionsSchema = z.array(conditionSchema).max(32).optional().meta({
  description: "Standard conditions.",
  "x-kubernetes-list-type": "map",
  "x-kubernetes-list-map-keys": ["type"],
});

export type Condition = z.infer<typeof conditionSchema>;

/** Condition types of an LVMNodeSet. */
export const NODESET_CONDITIONS = ["LVMNodesReady", "ProviderReady"] as const;
/** Condition types of an LVMNode. */
export const NODE_CONDITIONS = ["ProviderReady", "VolumeGroupsHealthy", "DeviceClassesHealthy"] as const;
