import { z } from "zod";
import { approvalRecordSchema, pendingApprovalSchema } from "./approval";
import { conditionsSchema } from "./conditions";
import { GROUP_VERSION, NODESET_STATES } from "./lvmnodeset";
import { objectMetaSchema } from "./objectmeta";
import { appliedTemplateGenerationSchema } from "./rollout";
import { checkTemplate, EVEN_WITH_FIELD_ERRORS, templateCelRules, templateFields } from "./template";

export const VOLUME_GROUP_STATES = [
  "Pending",
  "Progressing",
  "Healthy",
  "Degraded",
  "Failed",
  "Missing",
] as const;
export const DEVICE_CLASS_STATES = ["Pending", "Progressing", "Healthy", "Degraded", "Failed"] as const;
export const CLASS_OBJECT_STATES = ["Exists", "Missing", "Failed", "NotManaged"] as const;

export const DEFAULT_LVMD_SOCKET = "/run/topolvm/lvmd.sock";

/** A Unix socket path (sun_path) holds at most 107 bytes and a terminating NUL. */
export const SOCKET_PATH_MAX_BYTES = 107;

/**
 * What a socket path's length and pattern checks cannot say: its length in bytes (UTF-8; the
 * maxLength above counts characters), and no control characters or line/paragraph separators — it
 * is written into lvmd.yaml and shown in logs and plans, where a newline or U+2028 would forge lines.
 */
function checkSocketPath(path: string, ctx: z.RefinementCtx): void {
  const bad = /[\p{Cc}\u2028\u2029]/u.exec(path); // Cc: U+0000-001F and U+007F-009F
  if (bad)
    ctx.addIssue({
      code: "custom",
      message: `must not contain control characters or line/paragraph separators (U+${bad[0].codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0")} at character ${bad.index})`,
    });
  const bytes = Buffer.byteLength(path, "utf8");
  if (bytes > SOCKET_PATH_MAX_BYTES && path.length <= SOCKET_PATH_MAX_BYTES)
    ctx.addIssue({
      code: "custom",
      message: `must be at most ${SOCKET_PATH_MAX_BYTES} bytes (got ${bytes} bytes as UTF-8)`,
    });
}

export const lvmNodeSpecSchema = z
  .strictObject({
    ...templateFields,
    lvmd: z
      .strictObject({
        socketName: z
          .string()
          .max(SOCKET_PATH_MAX_BYTES) // characters here (and maxLength in the CRD); bytes below
          .regex(/^\/[^\0]*$/, { error: "must be an absolute path" })
          .superRefine(checkSocketPath)
          .meta({ description: `Unix socket of TopoLVM's lvmd. @default "${DEFAULT_LVMD_SOCKET}"` }),
      })
      .optional()
      .meta({ description: "TopoLVM lvmd settings for this node." }),
  })
  .superRefine(checkTemplate, EVEN_WITH_FIELD_ERRORS)
  .meta({
    description: "The node set's template for this one node, plus node-level settings.",
    "x-kubernetes-validations": templateCelRules,
  });

const deviceRefSchema = z.strictObject({
  kname: z.string().meta({ description: "Device path by kernel name, e.g. /dev/sdb." }),
  id: z
    .string()
    .optional()
    .meta({ description: "Stable identity (WWN+serial, by-id link or PV UUID) that survives renames." }),
  size: z.string().optional().meta({ description: "Size as a quantity." }),
});

export const volumeGroupStatusSchema = z.strictObject({
  name: z.string(),
  state: z.enum(VOLUME_GROUP_STATES),
  size: z.string().optional().meta({ description: "Total size as a quantity, e.g. 30Gi." }),
  free: z.string().optional().meta({ description: "Unallocated size as a quantity." }),
  message: z
    .string()
    .optional()
    .meta({ description: "Why, when not Healthy: names devices and lvm commands." }),
  devices: z
    .strictObject({
      included: z
        .array(deviceRefSchema)
        .max(1024)
        .optional()
        .meta({ description: "Devices that are physical volumes of the group." }),
      excluded: z
        .array(
          z.strictObject({
            kname: z.string(),
            reasons: z
              .array(z.string())
              .max(16)
              .meta({ description: "Why the device is not used, one sentence each." }),
          }),
        )
        .max(1024)
        .optional()
        .meta({ description: "Devices the selector matched, or could have, that are not used, and why." }),
    })
    .optional(),
  volumes: z
    .array(
      z.strictObject({
        name: z.string(),
        attributes: z.string().optional().meta({ description: "lvm lv_attr, e.g. twi-a-tz--." }),
        size: z.string().optional(),
        dataPercent: z.string().optional(),
        metadataPercent: z.string().optional(),
      }),
    )
    .max(64)
    .optional()
    .meta({ description: "Logical volumes we manage in the group (thin pools)." }),
});

export const deviceClassStatusSchema = z.strictObject({
  name: z.string(),
  volumeGroup: z.string(),
  state: z.enum(DEVICE_CLASS_STATES),
  message: z.string().optional(),
  storageClass: z.strictObject({ name: z.string(), state: z.enum(CLASS_OBJECT_STATES) }).optional(),
  snapshotClass: z.strictObject({ name: z.string(), state: z.enum(CLASS_OBJECT_STATES) }).optional(),
});

export const lvmNodeStatusSchema = z
  .strictObject({
    state: z.enum(NODESET_STATES).optional(),
    observedGeneration: z.number().int().min(0).optional(),
    volumeGroups: z.array(volumeGroupStatusSchema).max(32).optional(),
    deviceClasses: z.array(deviceClassStatusSchema).max(32).optional(),
    appliedTemplateGeneration: appliedTemplateGenerationSchema,
    pendingApproval: pendingApprovalSchema.optional(),
    lastApproval: approvalRecordSchema.optional(),
    conditions: conditionsSchema,
  })
  .meta({ description: "What is on the node, written by the node agent and operator." });

export const lvmNodeSchema = z
  .strictObject({
    apiVersion: z.literal(GROUP_VERSION),
    kind: z.literal("LVMNode"),
    metadata: objectMetaSchema,
    spec: lvmNodeSpecSchema,
    status: lvmNodeStatusSchema.optional(),
  })
  .meta({ description: "The LVM configuration and detailed state of one node; named after the node." });

export type LVMNode = z.infer<typeof lvmNodeSchema>;
export type LVMNodeSpec = z.infer<typeof lvmNodeSpecSchema>;
export type LVMNodeStatus = z.infer<typeof lvmNodeStatusSchema>;
export type VolumeGroupStatus = z.infer<typeof volumeGroupStatusSchema>;
export type DeviceClassStatus = z.infer<typeof deviceClassStatusSchema>;
