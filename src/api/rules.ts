/**
 * The rules of the API that its field types alone do not say, in one list: docs/api.md prints it,
 * the tests (rules.test.ts) hold valid and invalid cases for every entry, and the CRD test checks that
 * every CEL rule in the CRDs is one of these. The checks themselves live in the schemas (template.ts,
 * selectors.ts, names.ts, quantity.ts).
 */
export interface ApiRule {
  /** Stable id; the tests key their cases by it. */
  readonly id: string;
  /**
   * Where it applies. `<template>` is `spec.template` of an LVMNodeSet and `spec` of an LVMNode;
   * `<nodeSelector>` is `spec.nodeSelector.nodeSelectorTerms[*]` of an LVMNodeSet.
   */
  readonly field: string;
  /** The rule, as a person reads it. */
  readonly rule: string;
  /** The message of the CEL rule (x-kubernetes-validations) by which the API server enforces it too. */
  readonly cel?: string;
  /** How the API server enforces it when that is not a CEL rule. */
  readonly apiServer?: string;
}

const TEMPLATE = "<template>";
const VG = `${TEMPLATE}.volumeGroups[*]`;
const DC = `${TEMPLATE}.deviceClasses[*]`;
const DEVICE_EXPR = `${VG}.deviceSelector.deviceSelectorTerms[*].matchExpressions[*]`;
const NODE_TERM = "<nodeSelector>";
const NAMING = `${DC}.storageClass, ${DC}.snapshotClass`;

export const API_RULES = [
  {
    id: "object-type",
    field: "apiVersion, kind",
    rule: 'apiVersion is "lvm.topolvm.io/v2alpha1"; kind is "LVMNodeSet" or "LVMNode".',
    apiServer: "by the URL the object is sent to",
  },
  {
    id: "unknown-fields",
    field: "everywhere but metadata",
    rule: "Fields the API does not define are rejected, never silently dropped.",
    apiServer: "pruned; `kubectl apply` (strict field validation) rejects them",
  },
  {
    id: "names",
    field: `${VG}.name, ${DC}.name, ${DC}.thin.poolName, ${DC}.storageClass.prefix, ${DC}.snapshotClass.prefix`,
    rule: "Names are DNS-1123 labels: at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit (valid as Kubernetes, LVM and lvmd names at once).",
    apiServer: "schema pattern and maxLength",
  },
  {
    id: "volume-group-names-unique",
    field: `${VG}.name`,
    rule: "Volume group names are unique.",
    apiServer: "list map key (x-kubernetes-list-map-keys: name)",
  },
  {
    id: "device-class-names-unique",
    field: `${DC}.name`,
    rule: "Device class names are unique.",
    apiServer: "list map key (x-kubernetes-list-map-keys: name)",
  },
  {
    id: "device-class-volume-group",
    field: `${DC}.volumeGroup`,
    rule: "A device class names a volume group of the same template.",
    cel: "every device class must name a volume group in volumeGroups",
  },
  {
    id: "one-default-device-class",
    field: `${DC}.default`,
    rule: "At most one device class is the default.",
    cel: "at most one device class may be the default",
  },
  {
    id: "thin-required-for-thin",
    field: `${DC}.thin`,
    rule: "strategy Thin needs `thin`.",
    cel: "thin is required for strategy Thin",
  },
  {
    id: "thin-forbidden-for-thick",
    field: `${DC}.thin`,
    rule: "strategy Thick must not set `thin`.",
    cel: "thin must not be set for strategy Thick",
  },
  {
    id: "snapshot-class-thin-only",
    field: `${DC}.snapshotClass`,
    rule: "Only strategy Thin has a snapshotClass: TopoLVM snapshots are thin snapshots.",
    cel: "snapshotClass is only supported for strategy Thin",
  },
  {
    id: "thin-pool-name-not-reserved",
    field: `${DC}.thin.poolName`,
    rule: 'A thin pool name does not start with "snapshot" or "pvmove": LVM reserves them.',
    cel: "must not start with snapshot or pvmove: LVM reserves them",
  },
  {
    id: "thin-pool-names-unique",
    field: `${DC}.thin.poolName`,
    rule: "A thin pool name is used by one device class per volume group.",
  },
  {
    id: "one-thick-class-per-volume-group",
    field: `${DC}.volumeGroup`,
    rule: "A volume group has at most one Thick device class: TopoLVM's lvmd refuses two classes with the same volume group and thin pool, and a Thick class has no pool.",
  },
  {
    id: "thin-pools-fit",
    field: `${DC}.thin.sizePercent`,
    rule: "The thin pools of one volume group take at most 100% of it together (the sum of their sizePercent).",
  },
  {
    id: "thin-size-percent",
    field: `${DC}.thin.sizePercent`,
    rule: "sizePercent is a whole number from 1 to 100.",
    apiServer: "schema minimum and maximum",
  },
  {
    id: "overprovision-ratio",
    field: `${DC}.thin.overprovisionRatio`,
    rule: "overprovisionRatio is at least 1.",
    apiServer: "schema minimum",
  },
  {
    id: "chunk-size",
    field: `${DC}.thin.chunkSize`,
    rule: "chunkSize is a multiple of 64Ki from 64Ki to 1Gi (lvm2's limits).",
  },
  {
    id: "metadata-size",
    field: `${DC}.thin.metadataSize`,
    rule: "metadataSize is from 2Mi to 16Gi (lvm2's limits).",
  },
  {
    id: "capacity-thresholds",
    field: `${TEMPLATE}.capacity`,
    rule: "warningPercent and criticalPercent are whole numbers from 1 to 100, warningPercent below criticalPercent (defaults 75 and 85 count when one is left out).",
    cel: "warningPercent must be below criticalPercent",
  },
  {
    id: "quantities-exact",
    field: `${VG}.minDeviceSize, ${DC}.thin.chunkSize, ${DC}.thin.metadataSize, size values of device selectors`,
    rule: 'A size is a Kubernetes quantity ("30Gi", "1.5T", "500M", "1e9") that comes to a whole number of bytes, not negative and at most 2^53 - 1 (8 PiB): "0.5" and "100m" are rejected, never rounded.',
    apiServer: "schema pattern (the quantity grammar only)",
  },
  {
    id: "naming-explicit-needs-name",
    field: NAMING,
    rule: "namingPolicy Explicit needs `name`.",
    cel: "namingPolicy Explicit needs name",
  },
  {
    id: "naming-name-only-explicit",
    field: NAMING,
    rule: "`name` is only set with namingPolicy Explicit.",
    cel: "name is only used with namingPolicy Explicit",
  },
  {
    id: "naming-prefix-only-prefixed",
    field: NAMING,
    rule: "`prefix` is only set with namingPolicy Prefixed (the default).",
    cel: "prefix is only used with namingPolicy Prefixed",
  },
  {
    id: "device-term-not-empty",
    field: `${VG}.deviceSelector.deviceSelectorTerms[*]`,
    rule: "A device selector term has at least one expression: an empty term would match every disk.",
    cel: "a device selector term needs at least one expression (an empty term would match every disk)",
  },
  {
    id: "device-selector-size",
    field: `${VG}.deviceSelector`,
    rule: "A device selector holds at most 1024 values in all its terms together.",
    cel: "a device selector holds at most 1024 values in all its terms together",
  },
  {
    id: "device-values-in",
    field: DEVICE_EXPR,
    rule: "In and NotIn take one or more values.",
    cel: "In and NotIn need at least one value",
  },
  {
    id: "device-values-none",
    field: DEVICE_EXPR,
    rule: "Any, Exists and DoesNotExist take no values.",
    cel: "Any, Exists and DoesNotExist take no values",
  },
  {
    id: "device-values-one",
    field: DEVICE_EXPR,
    rule: "GreaterThan and LessThan take exactly one value.",
    cel: "GreaterThan and LessThan take exactly one value",
  },
  {
    id: "device-compare-keys",
    field: DEVICE_EXPR,
    rule: "GreaterThan and LessThan apply to the keys size and rotational only.",
    cel: "GreaterThan and LessThan only apply to size and rotational",
  },
  {
    id: "device-size-quantity",
    field: `${DEVICE_EXPR}.values`,
    rule: 'A value compared with size is a quantity ("30Gi").',
  },
  {
    id: "device-rotational-values",
    field: `${DEVICE_EXPR}.values`,
    rule: 'Values of rotational are "true", "false", "1" or "0".',
  },
  {
    id: "node-selector-size",
    field: "spec.nodeSelector",
    rule: "A node selector holds at most 1024 values in all its terms together.",
    cel: "a node selector holds at most 1024 values in all its terms together",
  },
  {
    id: "node-term-not-empty",
    field: NODE_TERM,
    rule: "A node selector term has at least one matchExpression or matchField.",
    cel: "a node selector term needs at least one matchExpression or matchField",
  },
  {
    id: "node-values-in",
    field: `${NODE_TERM}.matchExpressions[*]`,
    rule: "In and NotIn take one or more values.",
    cel: "In and NotIn need at least one value",
  },
  {
    id: "node-values-none",
    field: `${NODE_TERM}.matchExpressions[*]`,
    rule: "Exists and DoesNotExist take no values.",
    cel: "Exists and DoesNotExist take no values",
  },
  {
    id: "node-values-one",
    field: `${NODE_TERM}.matchExpressions[*]`,
    rule: "Gt and Lt take exactly one value, an integer.",
    cel: "Gt and Lt take exactly one value",
  },
  {
    id: "node-labels",
    field: `${NODE_TERM}.matchExpressions[*]`,
    rule: "Keys are label keys and values are label values, as the API server requires of node affinity.",
  },
  {
    id: "node-match-fields",
    field: `${NODE_TERM}.matchFields[*]`,
    rule: "matchFields only supports key metadata.name, with In or NotIn and exactly one node name, as core/v1.",
    cel: "matchFields only supports metadata.name with In or NotIn and exactly one value",
  },
  {
    id: "rollout-max-concurrent",
    field: "spec.rollout.maxConcurrent",
    rule: 'A whole number of nodes, at least 1, or a percentage from "1%" to "100%".',
    cel: 'maxConcurrent must be at least 1, or a percentage between "1%" and "100%"',
  },
  {
    id: "condition-fields",
    field: "status.conditions[*]",
    rule: "status is True, False or Unknown; lastTransitionTime is an RFC 3339 date-time with a time zone; condition types are unique.",
    apiServer: "schema enum and format; list map key (x-kubernetes-list-map-keys: type)",
  },
] as const satisfies readonly ApiRule[];

export type ApiRuleId = (typeof API_RULES)[number]["id"];
