import { z } from "zod";
import { nodeSelectorSchema } from "../../api/selectors";

/**
 * LVMS's LVMCluster (lvm.topolvm.io/v1alpha1), as its API documents it: the fields `convert` reads.
 * Strict, so a field this converter does not know is reported (lvmCluster.ts lists it as not
 * converted) instead of being dropped unseen. Types are as loose as LVMS's own CRD allows (a
 * quantity may be written as a number); our own rules are checked on the converted LVMNodeSets.
 */

export const LVMS_API_VERSION = "lvm.topolvm.io/v1alpha1";

const quantity = z.union([z.string(), z.number()]);

/** core/v1 NodeSelector, with the rules our API (and the API server) holds it to. */
const nodeSelector = nodeSelectorSchema;

const thinPoolConfig = z.strictObject({
  name: z.string(),
  sizePercent: z.number().int().optional(),
  overprovisionRatio: z.number().int(),
  chunkSizeCalculationPolicy: z.enum(["Static", "Host"]).optional(),
  chunkSize: quantity.optional(),
  metadataSizeCalculationPolicy: z.enum(["Static", "Host"]).optional(),
  metadataSize: quantity.optional(),
});

const deviceClass = z.strictObject({
  name: z.string(),
  deviceSelector: z
    .strictObject({
      paths: z.array(z.string()).optional(),
      optionalPaths: z.array(z.string()).optional(),
      forceWipeDevicesAndDestroyAllData: z.boolean().optional(),
    })
    .optional(),
  nodeSelector: nodeSelector.optional(),
  thinPoolConfig: thinPoolConfig.optional(),
  raidConfig: z.looseObject({ type: z.string() }).optional(),
  default: z.boolean().optional(),
  fstype: z.enum(["xfs", "ext4"]).optional(),
  deviceDiscoveryPolicy: z.enum(["Static", "Dynamic"]).optional(),
  storageClassOptions: z
    .strictObject({
      reclaimPolicy: z.enum(["Delete", "Retain"]).optional(),
      volumeBindingMode: z.enum(["WaitForFirstConsumer", "Immediate"]).optional(),
      additionalParameters: z.record(z.string(), z.string()).optional(),
      additionalLabels: z.record(z.string(), z.string()).optional(),
    })
    .optional(),
});

export const lvmClusterSchema = z.strictObject({
  apiVersion: z.literal(LVMS_API_VERSION),
  kind: z.literal("LVMCluster"),
  metadata: z.looseObject({
    name: z.string().min(1),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
  }),
  spec: z
    .strictObject({
      tolerations: z.array(z.looseObject({})).optional(),
      storage: z.strictObject({ deviceClasses: z.array(deviceClass).optional() }).optional(),
    })
    .optional(),
  status: z.unknown().optional(),
});

export type LvmCluster = z.infer<typeof lvmClusterSchema>;
export type LvmsDeviceClass = z.infer<typeof deviceClass>;
