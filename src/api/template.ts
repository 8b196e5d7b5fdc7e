import { capacitySchema } from "./capacity";
import { z } from "zod";
import { describeValue } from "./errors";
import { logicalVolumeName, resourceName } from "./names";
import { parseQuantity, quantity } from "./quantity";
import { deviceDiscoveryPolicySchema } from "./rollout";
import { approvalPolicyField } from "./approval";
import { deviceSelectorSchema } from "./selectors";

/**
 * zod skips an object's refinements once one of its fields has a type error, which would hide a
 * duplicate name behind an unrelated typo. Cross-field checks pass this to run anyway (and so read
 * the fields they use defensively): every problem is reported at once.
 */
export const EVEN_WITH_FIELD_ERRORS = { when: (p: z.core.ParsePayload) => isObject(p.value) };

/* ------------------------------------------------------------------------- volume groups ---- */

export const MISSING_DEVICE_POLICIES = ["Wait", "RemoveFromGroup", "RemoveWithLostVolumes"] as const;

export const volumeGroupSchema = z
  .strictObject({
    name: resourceName("The LVM volume group name on every node; also its identity in this API."),
    deviceSelector: deviceSelectorSchema,
    minDeviceSize: quantity(
      'Devices smaller than this are excluded. @default "1Gi" @example "100Gi"',
    ).optional(),
    deviceDiscoveryPolicy: deviceDiscoveryPolicySchema.optional(),
    forceWipeDevicesAndDestroyAllData: z.boolean().optional().meta({
      description:
        "Opt-in to erase existing signatures (filesystems, partition tables, foreign LVM metadata) on the selected devices before pvcreate. Without it such devices are excluded and reported, never touched. A device is wiped at most once, and only if it is in the plan the caller saw. @default false",
    }),
    missingDevicePolicy: z.enum(MISSING_DEVICE_POLICIES).optional().meta({
      description:
        "What a plan does when a physical volume of the group is missing (its disk died or was pulled): Wait: nothing changes in the group until the disk is back (the group is Degraded, the plan blocked and naming every logical volume on the missing disks). RemoveFromGroup: the plan takes the missing physical volumes out of the group (vgreduce --removemissing), only when no logical volume has data on them. RemoveWithLostVolumes: the plan also removes the logical volumes that had data on them (vgreduce --removemissing --force), naming each; such a plan always waits for an approval of its hash, whatever the approvalPolicy. A disk that comes back after it was removed is no longer a member (docs/disk-failure.md). @default Wait",
    }),
  })
  .meta({ description: "A volume group built from the devices its selector picks on each node." });

export type MissingDevicePolicy = (typeof MISSING_DEVICE_POLICIES)[number];

/* ------------------------------------------------------------------------- device classes ---- */

export const STRATEGIES = ["Thin", "Thick"] as const;
export const FS_TYPES = ["xfs", "ext4", "btrfs"] as const;
export const CREATION_POLICIES = ["CreateIfNotExists", "Never"] as const;
export const NAMING_POLICIES = ["Prefixed", "Explicit"] as const;

const GIB = 1 << 30;
const KIB = 1 << 10;
const MIB = 1 << 20;

export const thinPoolSchema = z
  .strictObject({
    poolName: logicalVolumeName("The thin pool logical volume's name in the volume group.").meta({
      "x-kubernetes-validations": [
        {
          rule: "!self.startsWith('snapshot') && !self.startsWith('pvmove')",
          message: "must not start with snapshot or pvmove: LVM reserves them",
        },
      ],
    }),
    sizePercent: z
      .number({ error: (i) => `must be a whole number between 1 and 100 (got ${describeValue(i.input)})` })
      .int({ error: (i) => `must be a whole number between 1 and 100 (got ${String(i.input)})` })
      .min(1, { error: (i) => `must be between 1 and 100 (got ${String(i.input)})` })
      .max(100, { error: (i) => `must be between 1 and 100 (got ${String(i.input)})` })
      .meta({ description: "Percent of the volume group the thin pool data takes. @example 90" }),
    overprovisionRatio: z
      .number({ error: (i) => `must be a number, at least 1 (got ${describeValue(i.input)})` })
      .min(1, { error: (i) => `must be at least 1 (got ${String(i.input)})` })
      .meta({
        description:
          "How far thin volumes may overcommit the pool, as TopoLVM's overprovision-ratio. @example 10",
      }),
    chunkSize: quantity(
      'Thin pool chunk size: a multiple of 64Ki between 64Ki and 1Gi. @default chosen by lvm2 (thin_pool_chunk_size_policy) @example "256Ki"',
    )
      .superRefine((text, ctx) => {
        const q = parseQuantity(text);
        if (q.ok && (q.bytes < 64 * KIB || q.bytes > GIB || q.bytes % (64 * KIB) !== 0))
          ctx.addIssue({
            code: "custom",
            message: `must be a multiple of 64Ki between 64Ki and 1Gi (got "${text}")`,
          });
      })
      .optional(),
    metadataSize: quantity(
      'Thin pool metadata size, between 2Mi and 16Gi. @default chosen by lvm2 from the pool and chunk size @example "1Gi"',
    )
      .superRefine((text, ctx) => {
        const q = parseQuantity(text);
        if (q.ok && (q.bytes < 2 * MIB || q.bytes > 16 * GIB))
          ctx.addIssue({ code: "custom", message: `must be between 2Mi and 16Gi (got "${text}")` });
      })
      .optional(),
  })
  .meta({ description: "Thin pool settings; required for strategy Thin, forbidden for Thick." });

const classNaming = {
  creationPolicy: z.enum(CREATION_POLICIES).optional().meta({
    description:
      "CreateIfNotExists: create it when missing, never modify one that exists. Never: do not create it. @default CreateIfNotExists",
  }),
  namingPolicy: z
    .enum(NAMING_POLICIES)
    .optional()
    .meta({ description: 'Prefixed: "<prefix>-<deviceClass>". Explicit: `name`. @default Prefixed' }),
  prefix: resourceName('Prefix for namingPolicy Prefixed. @default "lvms"').optional(),
  name: z
    .string()
    .max(253)
    .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { error: "must be a DNS-1123 subdomain" })
    .optional()
    .meta({ description: "The object name for namingPolicy Explicit." }),
  additionalParameters: z
    .record(z.string(), z.string())
    .optional()
    .meta({ description: "Extra `parameters` merged into the object (ours win on conflicts)." }),
};

const namingRules = [
  {
    rule: "has(self.namingPolicy) && self.namingPolicy == 'Explicit' ? has(self.name) : true",
    message: "namingPolicy Explicit needs name",
  },
  {
    rule: "!has(self.namingPolicy) || self.namingPolicy == 'Prefixed' ? !has(self.name) : true",
    message: "name is only used with namingPolicy Explicit",
  },
  {
    rule: "has(self.namingPolicy) && self.namingPolicy == 'Explicit' ? !has(self.prefix) : true",
    message: "prefix is only used with namingPolicy Prefixed",
  },
];

/** The naming rules need a known namingPolicy; a misspelt one is reported on its own. */
const namingCheckable = {
  when: (p: z.core.ParsePayload) => {
    const policy = field(p.value, "namingPolicy");
    return (
      isObject(p.value) && (policy === undefined || (NAMING_POLICIES as readonly unknown[]).includes(policy))
    );
  },
};

function checkNaming(c: { namingPolicy?: string; name?: string; prefix?: string }, ctx: z.RefinementCtx) {
  const explicit = c.namingPolicy === "Explicit";
  if (explicit && !c.name)
    ctx.addIssue({ code: "custom", path: ["name"], message: "namingPolicy Explicit needs name" });
  if (!explicit && c.name !== undefined)
    ctx.addIssue({ code: "custom", path: ["name"], message: "name is only used with namingPolicy Explicit" });
  if (explicit && c.prefix !== undefined)
    ctx.addIssue({
      code: "custom",
      path: ["prefix"],
      message: "prefix is only used with namingPolicy Prefixed",
    });
}

export const storageClassSchema = z
  .strictObject({
    ...classNaming,
    reclaimPolicy: z.enum(["Delete", "Retain"]).optional().meta({ description: "@default Delete" }),
    volumeBindingMode: z
      .enum(["WaitForFirstConsumer", "Immediate"])
      .optional()
      .meta({ description: "@default WaitForFirstConsumer (TopoLVM needs the node before it provisions)" }),
    allowVolumeExpansion: z.boolean().optional().meta({ description: "@default true" }),
  })
  .superRefine(checkNaming, namingCheckable)
  .meta({
    description: "The StorageClass created for the device class.",
    "x-kubernetes-validations": namingRules,
  });

export const snapshotClassSchema = z
  .strictObject({
    ...classNaming,
    deletionPolicy: z
      .enum(["Delete", "Retain"])
      .optional()
      .meta({ description: "The VolumeSnapshotClass deletionPolicy. @default Delete" }),
  })
  .superRefine(checkNaming, namingCheckable)
  .meta({
    description:
      "The VolumeSnapshotClass created for the device class (Thin only: TopoLVM snapshots are thin snapshots).",
    "x-kubernetes-validations": namingRules,
  });

export const deviceClassSchema = z
  .strictObject({
    name: resourceName("The TopoLVM device class name."),
    strategy: z
      .enum(STRATEGIES)
      .meta({ description: "Thin: volumes in a thin pool. Thick: linear volumes in the volume group." }),
    volumeGroup: z.string().max(63).meta({ description: "Name of a volume group in volumeGroups." }),
    default: z
      .boolean()
      .optional()
      .meta({ description: "The default device class; at most one. @default false" }),
    fsType: z
      .enum(FS_TYPES)
      .optional()
      .meta({ description: "Filesystem TopoLVM creates on volumes. @default xfs" }),
    thin: thinPoolSchema.optional(),
    storageClass: storageClassSchema.optional(),
    snapshotClass: snapshotClassSchema.optional(),
  })
  .superRefine((dc, ctx) => {
    if (dc.strategy === "Thin" && !dc.thin)
      ctx.addIssue({ code: "custom", path: ["thin"], message: "is required for strategy Thin" });
    if (dc.strategy === "Thick" && dc.thin)
      ctx.addIssue({ code: "custom", path: ["thin"], message: "must not be set for strategy Thick" });
    if (dc.strategy === "Thick" && dc.snapshotClass)
      ctx.addIssue({
        code: "custom",
        path: ["snapshotClass"],
        message: "is only supported for strategy Thin (TopoLVM snapshots are thin snapshots)",
      });
  }, EVEN_WITH_FIELD_ERRORS)
  .meta({
    description: "A TopoLVM device class on one volume group, with its StorageClass and VolumeSnapshotClass.",
    "x-kubernetes-validations": [
      {
        rule: "self.strategy == 'Thin' ? has(self.thin) : true",
        message: "thin is required for strategy Thin",
        fieldPath: ".thin",
      },
      {
        rule: "self.strategy == 'Thick' ? !has(self.thin) : true",
        message: "thin must not be set for strategy Thick",
        fieldPath: ".thin",
      },
      {
        rule: "self.strategy == 'Thick' ? !has(self.snapshotClass) : true",
        message: "snapshotClass is only supported for strategy Thin",
        fieldPath: ".snapshotClass",
      },
    ],
  });

/* ------------------------------------------------------------------------------ template ---- */

export const DELETION_POLICIES = ["Retain", "Delete"] as const;

const templateFields = {
  volumeGroups: z
    .array(volumeGroupSchema)
    .min(1)
    .max(32)
    .meta({
      description: "Volume groups to create on each node.",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    }),
  deviceClasses: z
    .array(deviceClassSchema)
    .max(32)
    .optional()
    .meta({
      description: "TopoLVM device classes over the volume groups.",
      "x-kubernetes-list-type": "map",
      "x-kubernetes-list-map-keys": ["name"],
    }),
  capacity: capacitySchema.optional(),
  deletionPolicy: z.enum(DELETION_POLICIES).optional().meta({
    description:
      "What happens on the nodes when this is deleted. Retain: volume groups and thin pools stay. Delete: thin pools and volume groups that hold no other logical volumes are removed and their PVs wiped of LVM labels; a volume group that still holds volumes is never removed without force. @default Retain",
  }),
  approvalPolicy: approvalPolicyField,
};

type TemplateShape = {
  volumeGroups: Array<{ name: string }>;
  deviceClasses?: Array<{
    name: string;
    volumeGroup: string;
    default?: boolean;
    thin?: { poolName: string; sizePercent: number };
  }>;
};

/**
 * Cross-field rules of a template (and of an LVMNode spec, which has the same fields). Runs even when
 * fields failed their own checks (EVEN_WITH_FIELD_ERRORS), so it only relies on what it can read: an
 * entry whose name is unreadable is skipped, and a device class is checked against the volume groups
 * only when every volume group name could be read.
 */
export function checkTemplate(t: TemplateShape, ctx: z.RefinementCtx) {
  const vgIndex = new Map<string, number>();
  const volumeGroups = list(t.volumeGroups);
  volumeGroups.forEach((vg, i) => {
    const name = text(field(vg, "name"));
    if (name === undefined) return;
    if (vgIndex.has(name))
      ctx.addIssue({
        code: "custom",
        path: ["volumeGroups", i, "name"],
        message: `duplicate volume group name "${name}" (also volumeGroups[${vgIndex.get(name)}])`,
      });
    else vgIndex.set(name, i);
  });
  const allVolumeGroupsKnown = volumeGroups.every((vg) => text(field(vg, "name")) !== undefined);
  const dcIndex = new Map<string, number>();
  const defaults: number[] = [];
  const pools = new Map<string, number>();
  const thickClasses = new Map<string, number>();
  const poolPercent = new Map<string, number>();
  list(t.deviceClasses).forEach((dc, i) => {
    const name = text(field(dc, "name"));
    const volumeGroup = text(field(dc, "volumeGroup"));
    if (name !== undefined) {
      if (dcIndex.has(name))
        ctx.addIssue({
          code: "custom",
          path: ["deviceClasses", i, "name"],
          message: `duplicate device class name "${name}" (also deviceClasses[${dcIndex.get(name)}])`,
        });
      else dcIndex.set(name, i);
    }
    if (volumeGroup !== undefined && allVolumeGroupsKnown && !vgIndex.has(volumeGroup))
      ctx.addIssue({
        code: "custom",
        path: ["deviceClasses", i, "volumeGroup"],
        message: `names volume group "${volumeGroup}", which is not in volumeGroups (have: ${[...vgIndex.keys()].join(", ") || "none"})`,
      });
    if (field(dc, "default") === true) defaults.push(i);
    const thin = field(dc, "thin");
    const poolName = text(field(thin, "poolName"));
    const sizePercent = field(thin, "sizePercent");
    if (volumeGroup === undefined || !vgIndex.has(volumeGroup)) return;
    if (field(dc, "strategy") === "Thick") {
      // lvmd.yaml names a class by (volume-group, thin-pool); TopoLVM's lvmd refuses to start when two
      // classes share it, which two Thick classes (no thin pool) on one volume group do.
      if (thickClasses.has(volumeGroup))
        ctx.addIssue({
          code: "custom",
          path: ["deviceClasses", i, "volumeGroup"],
          message: `volume group "${volumeGroup}" already has the Thick device class deviceClasses[${thickClasses.get(volumeGroup)}]; TopoLVM allows one Thick class per volume group`,
        });
      else thickClasses.set(volumeGroup, i);
    }
    if (poolName !== undefined) {
      const key = `${volumeGroup}/${poolName}`;
      if (pools.has(key))
        ctx.addIssue({
          code: "custom",
          path: ["deviceClasses", i, "thin", "poolName"],
          message: `thin pool "${poolName}" in volume group "${volumeGroup}" is already used by deviceClasses[${pools.get(key)}]`,
        });
      else pools.set(key, i);
    }
    if (
      typeof sizePercent === "number" &&
      Number.isInteger(sizePercent) &&
      sizePercent >= 1 &&
      sizePercent <= 100
    ) {
      const total = (poolPercent.get(volumeGroup) ?? 0) + sizePercent;
      poolPercent.set(volumeGroup, total);
      if (total > 100)
        ctx.addIssue({
          code: "custom",
          path: ["deviceClasses", i, "thin", "sizePercent"],
          message: `thin pools in volume group "${volumeGroup}" add up to ${total}% of it, more than 100%`,
        });
    }
  });
  if (defaults.length > 1)
    ctx.addIssue({
      code: "custom",
      path: ["deviceClasses", defaults[1]!, "default"],
      message: `at most one device class may be the default (deviceClasses[${defaults.join("], deviceClasses[")}] are)`,
    });
}

/** CEL forms of the cross-field rules, for the CRD (the apiserver enforces them without our webhook). */
export const templateCelRules = [
  {
    rule: "!has(self.deviceClasses) || self.deviceClasses.all(d, self.volumeGroups.exists(v, v.name == d.volumeGroup))",
    message: "every device class must name a volume group in volumeGroups",
    fieldPath: ".deviceClasses",
  },
  {
    rule: "!has(self.deviceClasses) || self.deviceClasses.filter(d, has(d.default) && d.default).size() <= 1",
    message: "at most one device class may be the default",
    fieldPath: ".deviceClasses",
  },
];

export const templateSchema = z
  .strictObject(templateFields)
  .superRefine(checkTemplate, EVEN_WITH_FIELD_ERRORS)
  .meta({
    description: "What every selected node gets: volume groups and the device classes on them.",
    "x-kubernetes-validations": templateCelRules,
  });

export { templateFields };
export type VolumeGroup = z.infer<typeof volumeGroupSchema>;
export type DeviceClass = z.infer<typeof deviceClassSchema>;
export type ThinPool = z.infer<typeof thinPoolSchema>;
export type StorageClassSettings = z.infer<typeof storageClassSchema>;
export type SnapshotClassSettings = z.infer<typeof snapshotClassSchema>;
export type Template = z.infer<typeof templateSchema>;
export type DeletionPolicy = (typeof DELETION_POLICIES)[number];

/* ------------------------------------------------------------------------------- helpers ---- */

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function field(value: unknown, key: string): unknown {
  return isObject(value) ? value[key] : undefined;
}

function list(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function text(value: unknown): string | undefined {
  return typeof value === "string" ? value : undefined;
}
