/**
 * Valid and invalid cases for every rule of src/api/rules.ts, each a small change to the proposal's
 * example objects. src/api/rules.test.ts checks our validation against them; test/crd/ checks what a
 * real API server with our CRDs does with the same objects.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import YAML from "yaml";
import type { ApiRuleId } from "../../src/api/rules";

/**
 * Manifests as the cases change them: plain YAML data, deliberately invalid, so not typed.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Manifest = any;

export type ExampleKind = "LVMNodeSet" | "LVMNode";

export interface RuleCase {
  readonly name: string;
  /** The proposal example the case starts from. @default "LVMNodeSet" */
  readonly base?: ExampleKind;
  /** Turns the example into the case (mutating it). */
  readonly change: (o: Manifest) => void;
  /** `[path, message]` of every problem our validation reports, in order; empty: valid. */
  readonly problems: ReadonlyArray<readonly [string, string]>;
  /**
   * For an invalid case, what a real API server with our CRDs does: rejects it with a message that
   * contains the given text, or accepts it (only our validation enforces the rule).
   */
  readonly apiServer?: "accepts" | { readonly rejects: string };
}

export const FIXTURES = path.join(__dirname, "..", "fixtures", "api");
export const EXAMPLE_FILES: Record<ExampleKind, string> = {
  LVMNodeSet: path.join(FIXTURES, "proposal-lvmnodeset.yaml"),
  LVMNode: path.join(FIXTURES, "proposal-lvmnode.yaml"),
};

/** A fresh copy of the proposal's example object. */
export function example(kind: ExampleKind): Manifest {
  return YAML.parse(fs.readFileSync(EXAMPLE_FILES[kind], "utf8"));
}

/** The example changed as the case says. */
export function caseObject(c: RuleCase): Manifest {
  const o = example(c.base ?? "LVMNodeSet");
  c.change(o);
  return o;
}

const T = "spec.template";
const DC = `${T}.deviceClasses`;
const VG = `${T}.volumeGroups`;
const NODE_TERM = "spec.nodeSelector.nodeSelectorTerms[0]";

const tmpl = (o: Manifest) => o.spec.template;
const dc0 = (o: Manifest) => o.spec.template.deviceClasses[0];
const addClass = (o: Manifest, dc: Manifest) => o.spec.template.deviceClasses.push(dc);
const thick = (name: string, extra: Manifest = {}) => ({
  name,
  strategy: "Thick",
  volumeGroup: "othervg",
  ...extra,
});
const thin = (name: string, volumeGroup: string, pool: Manifest) => ({
  name,
  strategy: "Thin",
  volumeGroup,
  thin: { poolName: `${name}-pool`, sizePercent: 10, overprovisionRatio: 2, ...pool },
});
/** The expressions of a volume group's first device selector term. */
const deviceExprs = (o: Manifest, vg: number) =>
  o.spec.template.volumeGroups[vg].deviceSelector.deviceSelectorTerms[0].matchExpressions;
const DEVICE_EXPR = (vg: number, e: number) =>
  `${VG}[${vg}].deviceSelector.deviceSelectorTerms[0].matchExpressions[${e}]`;
const nodeExpr = (o: Manifest, e: Manifest) =>
  (o.spec.nodeSelector.nodeSelectorTerms[0] = { matchExpressions: [e] });
const nodeField = (o: Manifest, f: Manifest) =>
  (o.spec.nodeSelector.nodeSelectorTerms[0] = { matchFields: [f] });

/** `n` selector values, 256 to a requirement, one requirement to a term: `{ key, operator: In, values }` terms. */
const manyValueTerms = (n: number, key: string, value: (i: number) => string) =>
  Array.from({ length: Math.ceil(n / 256) }, (_, t) => ({
    matchExpressions: [
      {
        key,
        operator: "In",
        values: Array.from({ length: Math.min(256, n - t * 256) }, (_, i) => value(t * 256 + i)),
      },
    ],
  }));

const LABEL_KEY = (key: string) =>
  `must be a label key: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit, optionally after a DNS prefix and '/' (got "${key}")`;
const DNS_LABEL = (name: string) =>
  `must be a DNS-1123 label: lowercase letters, digits and '-', starting and ending with a letter or digit (got "${name}")`;
const QUANTITY = (text: string) =>
  `must be a Kubernetes quantity such as "30Gi", "1.5T" or "500M" (got "${text}")`;

export const RULE_CASES: Record<ApiRuleId, readonly RuleCase[]> = {
  "object-type": [
    { name: "an LVMNode", base: "LVMNode", change: () => {}, problems: [] },
    {
      name: "a misspelt kind",
      change: (o) => (o.kind = "LVMNodeSett"),
      problems: [["kind", 'must be "LVMNodeSet" or "LVMNode" (got "LVMNodeSett")']],
      apiServer: { rejects: 'kind: Invalid value: "LVMNodeSett": must be LVMNodeSet' },
    },
    {
      name: "the v1alpha1 API version",
      change: (o) => (o.apiVersion = "lvm.topolvm.io/v1alpha1"),
      problems: [["apiVersion", 'must be "lvm.topolvm.io/v2alpha1" (got "lvm.topolvm.io/v1alpha1")']],
      apiServer: { rejects: 'LVMNodeSet in version "v1alpha1" cannot be handled' },
    },
    {
      name: "no apiVersion",
      base: "LVMNode",
      change: (o) => delete o.apiVersion,
      problems: [["apiVersion", 'must be "lvm.topolvm.io/v2alpha1" (got undefined)']],
      apiServer: { rejects: "does not match the expected API version (lvm.topolvm.io/v2alpha1)" },
    },
  ],
  "unknown-fields": [
    {
      name: "any metadata the API server adds",
      change: (o) => {
        o.metadata.namespace = "storage";
        o.metadata.labels = { team: "storage" };
        o.metadata.finalizers = ["lvm.topolvm.io/cleanup"];
        o.metadata.generation = 3;
      },
      problems: [],
    },
    {
      name: "a misspelt field",
      change: (o) => {
        dc0(o).thin.sizepercent = 90;
      },
      problems: [[`${DC}[0].thin.sizepercent`, "unknown field"]],
      apiServer: { rejects: 'unknown field "spec.template.deviceClasses[0].thin.sizepercent"' },
    },
    {
      name: "a field at the top",
      base: "LVMNode",
      change: (o) => (o.specs = {}),
      problems: [["specs", "unknown field"]],
      apiServer: { rejects: 'unknown field "specs"' },
    },
  ],
  names: [
    {
      name: "one character and 63 characters",
      change: (o) => {
        tmpl(o).volumeGroups[1].name = "a";
        addClass(o, thick("x".repeat(63), { volumeGroup: "a" }));
      },
      problems: [],
    },
    {
      name: "an upper-case volume group name with an underscore",
      change: (o) => (tmpl(o).volumeGroups[1].name = "Other_VG"),
      problems: [[`${VG}[1].name`, DNS_LABEL("Other_VG")]],
      apiServer: { rejects: "should match" },
    },
    {
      name: "a 64-character device class name",
      change: (o) => addClass(o, thick("x".repeat(64))),
      problems: [[`${DC}[1].name`, "must be at most 63 characters (got 64)"]],
      apiServer: { rejects: "may not be more than 63 bytes" },
    },
    {
      name: "an empty thin pool name",
      change: (o) => (dc0(o).thin.poolName = ""),
      problems: [[`${DC}[0].thin.poolName`, "must not be empty"]],
      apiServer: { rejects: "should be at least 1 chars long" },
    },
    {
      name: "a class prefix ending in '-'",
      change: (o) => (dc0(o).storageClass.prefix = "lvms-"),
      problems: [[`${DC}[0].storageClass.prefix`, DNS_LABEL("lvms-")]],
      apiServer: { rejects: "should match" },
    },
  ],
  "volume-group-names-unique": [
    {
      name: "a repeated volume group name",
      change: (o) => (tmpl(o).volumeGroups[2].name = "vg1"),
      problems: [[`${VG}[2].name`, 'duplicate volume group name "vg1" (also volumeGroups[0])']],
      apiServer: { rejects: "Duplicate value" },
    },
    {
      name: "a repeated volume group name in an LVMNode",
      base: "LVMNode",
      change: (o) => (o.spec.volumeGroups[1].name = "specific-serials"),
      problems: [
        [
          "spec.volumeGroups[2].name",
          'duplicate volume group name "specific-serials" (also volumeGroups[1])',
        ],
      ],
      apiServer: { rejects: "Duplicate value" },
    },
  ],
  "device-class-names-unique": [
    {
      name: "a repeated device class name",
      change: (o) => addClass(o, thick("thinly-provisioned")),
      problems: [
        [`${DC}[1].name`, 'duplicate device class name "thinly-provisioned" (also deviceClasses[0])'],
      ],
      apiServer: { rejects: "Duplicate value" },
    },
  ],
  "device-class-volume-group": [
    { name: "a class on another volume group", change: (o) => addClass(o, thick("linear")), problems: [] },
    {
      name: "a volume group that does not exist",
      change: (o) => (dc0(o).volumeGroup = "missing"),
      problems: [
        [
          `${DC}[0].volumeGroup`,
          'names volume group "missing", which is not in volumeGroups (have: vg1, othervg, specific-serials)',
        ],
      ],
      apiServer: { rejects: "every device class must name a volume group in volumeGroups" },
    },
    {
      name: "a volume group that does not exist, in an LVMNode",
      base: "LVMNode",
      change: (o) => (o.spec.deviceClasses[0].volumeGroup = "vg2"),
      problems: [
        [
          "spec.deviceClasses[0].volumeGroup",
          'names volume group "vg2", which is not in volumeGroups (have: vg1, othervg, specific-serials)',
        ],
      ],
      apiServer: { rejects: "every device class must name a volume group in volumeGroups" },
    },
  ],
  "rollout-max-concurrent": [
    { name: "a number", change: (o) => (o.spec.rollout = { maxConcurrent: 2 }), problems: [] },
    { name: "a percentage", change: (o) => (o.spec.rollout = { maxConcurrent: "25%" }), problems: [] },
    {
      name: "zero",
      change: (o) => (o.spec.rollout = { maxConcurrent: 0 }),
      problems: [["spec.rollout.maxConcurrent", "must be at least 1 (got 0)"]],
      apiServer: { rejects: 'maxConcurrent must be at least 1, or a percentage between "1%" and "100%"' },
    },
    {
      name: "not a percentage",
      change: (o) => (o.spec.rollout = { maxConcurrent: "0%" }),
      problems: [["spec.rollout.maxConcurrent", 'must be a percentage between 1% and 100% (got "0%")']],
      apiServer: { rejects: 'maxConcurrent must be at least 1, or a percentage between "1%" and "100%"' },
    },
  ],
  "one-default-device-class": [
    { name: "no default", change: (o) => delete dc0(o).default, problems: [] },
    {
      name: "one default and one not",
      change: (o) => addClass(o, thick("linear", { default: false })),
      problems: [],
    },
    {
      name: "two defaults",
      change: (o) => addClass(o, thick("linear", { default: true })),
      problems: [
        [
          `${DC}[1].default`,
          "at most one device class may be the default (deviceClasses[0], deviceClasses[1] are)",
        ],
      ],
      apiServer: { rejects: "at most one device class may be the default" },
    },
  ],
  "thin-required-for-thin": [
    {
      name: "strategy Thin without thin",
      change: (o) => delete dc0(o).thin,
      problems: [[`${DC}[0].thin`, "is required for strategy Thin"]],
      apiServer: { rejects: "thin is required for strategy Thin" },
    },
  ],
  "thin-forbidden-for-thick": [
    { name: "strategy Thick without thin", change: (o) => addClass(o, thick("linear")), problems: [] },
    {
      name: "strategy Thick with thin",
      change: (o) => {
        dc0(o).strategy = "Thick";
        delete dc0(o).snapshotClass;
      },
      problems: [[`${DC}[0].thin`, "must not be set for strategy Thick"]],
      apiServer: { rejects: "thin must not be set for strategy Thick" },
    },
  ],
  "snapshot-class-thin-only": [
    {
      name: "strategy Thick with a snapshot class",
      change: (o) => addClass(o, thick("linear", { snapshotClass: {} })),
      problems: [
        [
          `${DC}[1].snapshotClass`,
          "is only supported for strategy Thin (TopoLVM snapshots are thin snapshots)",
        ],
      ],
      apiServer: { rejects: "snapshotClass is only supported for strategy Thin" },
    },
  ],
  "thin-pool-name-not-reserved": [
    {
      name: "a name that contains snapshot",
      change: (o) => (dc0(o).thin.poolName = "my-snapshots"),
      problems: [],
    },
    {
      name: "a name starting with snapshot",
      change: (o) => (dc0(o).thin.poolName = "snapshots"),
      problems: [[`${DC}[0].thin.poolName`, 'must not start with "snapshot": LVM reserves it']],
      apiServer: { rejects: "must not start with snapshot or pvmove: LVM reserves them" },
    },
    {
      name: "a name starting with pvmove",
      change: (o) => (dc0(o).thin.poolName = "pvmove0"),
      problems: [[`${DC}[0].thin.poolName`, 'must not start with "pvmove": LVM reserves it']],
      apiServer: { rejects: "must not start with snapshot or pvmove: LVM reserves them" },
    },
  ],
  "thin-pool-names-unique": [
    {
      name: "the same pool name in another volume group",
      change: (o) => addClass(o, thin("other", "othervg", { poolName: "thin-pool-1" })),
      problems: [],
    },
    {
      name: "the same pool name twice in one volume group",
      change: (o) => addClass(o, thin("other", "vg1", { poolName: "thin-pool-1", sizePercent: 5 })),
      problems: [
        [
          `${DC}[1].thin.poolName`,
          'thin pool "thin-pool-1" in volume group "vg1" is already used by deviceClasses[0]',
        ],
      ],
      apiServer: "accepts",
    },
  ],
  "one-thick-class-per-volume-group": [
    {
      name: "a Thick class on each of two volume groups",
      change: (o) => {
        addClass(o, thick("linear"));
        addClass(o, thick("linear-fast", { volumeGroup: "vg1" }));
      },
      problems: [],
    },
    {
      name: "two Thick classes on one volume group",
      change: (o) => {
        addClass(o, thick("linear"));
        addClass(o, thick("linear-again"));
      },
      problems: [
        [
          `${DC}[2].volumeGroup`,
          'volume group "othervg" already has the Thick device class deviceClasses[1]; TopoLVM allows one Thick class per volume group',
        ],
      ],
      apiServer: "accepts",
    },
  ],
  "thin-pools-fit": [
    {
      name: "pools adding up to exactly 100%",
      change: (o) => addClass(o, thin("other", "vg1", {})),
      problems: [],
    },
    {
      name: "pools adding up to 101%",
      change: (o) => addClass(o, thin("other", "vg1", { sizePercent: 11 })),
      problems: [
        [
          `${DC}[1].thin.sizePercent`,
          'thin pools in volume group "vg1" add up to 101% of it, more than 100%',
        ],
      ],
      apiServer: "accepts",
    },
    {
      name: "pools over 100% reported at each class past the limit",
      change: (o) => {
        addClass(o, thin("b", "vg1", { sizePercent: 20 }));
        addClass(o, thin("c", "vg1", { sizePercent: 1 }));
      },
      problems: [
        [
          `${DC}[1].thin.sizePercent`,
          'thin pools in volume group "vg1" add up to 110% of it, more than 100%',
        ],
        [
          `${DC}[2].thin.sizePercent`,
          'thin pools in volume group "vg1" add up to 111% of it, more than 100%',
        ],
      ],
      apiServer: "accepts",
    },
  ],
  "thin-size-percent": [
    {
      name: "1% and 100%",
      change: (o) => {
        dc0(o).thin.sizePercent = 1;
        addClass(o, thin("other", "othervg", { sizePercent: 100 }));
      },
      problems: [],
    },
    {
      name: "120%",
      change: (o) => addClass(o, thin("other", "othervg", { sizePercent: 120 })),
      problems: [[`${DC}[1].thin.sizePercent`, "must be between 1 and 100 (got 120)"]],
      apiServer: { rejects: "should be less than or equal to 100" },
    },
    {
      name: "0%",
      change: (o) => (dc0(o).thin.sizePercent = 0),
      problems: [[`${DC}[0].thin.sizePercent`, "must be between 1 and 100 (got 0)"]],
      apiServer: { rejects: "should be greater than or equal to 1" },
    },
    {
      name: "a fraction",
      change: (o) => (dc0(o).thin.sizePercent = 1.5),
      problems: [[`${DC}[0].thin.sizePercent`, "must be a whole number between 1 and 100 (got 1.5)"]],
      apiServer: { rejects: "must be of type integer" },
    },
    {
      name: "a string",
      change: (o) => (dc0(o).thin.sizePercent = "90"),
      problems: [[`${DC}[0].thin.sizePercent`, 'must be a whole number between 1 and 100 (got "90")']],
      apiServer: { rejects: "must be of type integer" },
    },
  ],
  "overprovision-ratio": [
    {
      name: "1 and 1.5",
      change: (o) => addClass(o, thin("other", "othervg", { overprovisionRatio: 1.5 })),
      problems: [],
    },
    {
      name: "0.5",
      change: (o) => (dc0(o).thin.overprovisionRatio = 0.5),
      problems: [[`${DC}[0].thin.overprovisionRatio`, "must be at least 1 (got 0.5)"]],
      apiServer: { rejects: "should be greater than or equal to 1" },
    },
    {
      name: "missing",
      change: (o) => delete dc0(o).thin.overprovisionRatio,
      problems: [[`${DC}[0].thin.overprovisionRatio`, "is required"]],
      apiServer: { rejects: "Required value" },
    },
  ],
  "chunk-size": [
    {
      name: "64Ki, 1Gi and 65536",
      change: (o) => {
        dc0(o).thin.chunkSize = "64Ki";
        addClass(o, thin("b", "othervg", { chunkSize: "1Gi" }));
        addClass(o, thin("c", "specific-serials", { chunkSize: "65536" }));
      },
      problems: [],
    },
    {
      name: "32Ki",
      change: (o) => (dc0(o).thin.chunkSize = "32Ki"),
      problems: [[`${DC}[0].thin.chunkSize`, 'must be a multiple of 64Ki between 64Ki and 1Gi (got "32Ki")']],
      apiServer: "accepts",
    },
    {
      name: "96Ki, not a multiple of 64Ki",
      change: (o) => (dc0(o).thin.chunkSize = "96Ki"),
      problems: [[`${DC}[0].thin.chunkSize`, 'must be a multiple of 64Ki between 64Ki and 1Gi (got "96Ki")']],
      apiServer: "accepts",
    },
    {
      name: "2Gi",
      change: (o) => (dc0(o).thin.chunkSize = "2Gi"),
      problems: [[`${DC}[0].thin.chunkSize`, 'must be a multiple of 64Ki between 64Ki and 1Gi (got "2Gi")']],
      apiServer: "accepts",
    },
  ],
  "capacity-thresholds": [
    {
      name: "50 and 60; only a warning below the default critical",
      change: (o) => (tmpl(o).capacity = { warningPercent: 50, criticalPercent: 60 }),
      problems: [],
    },
    {
      name: "only warningPercent 80",
      change: (o) => (tmpl(o).capacity = { warningPercent: 80 }),
      problems: [],
    },
    {
      name: "warning 90 with the default critical 85",
      change: (o) => (tmpl(o).capacity = { warningPercent: 90 }),
      problems: [[`${T}.capacity.warningPercent`, "warningPercent (90) must be below criticalPercent (85)"]],
      apiServer: { rejects: "warningPercent must be below criticalPercent" },
    },
    {
      name: "critical 70 with the default warning 75",
      change: (o) => (tmpl(o).capacity = { criticalPercent: 70 }),
      problems: [[`${T}.capacity.criticalPercent`, "warningPercent (75) must be below criticalPercent (70)"]],
      apiServer: { rejects: "warningPercent must be below criticalPercent" },
    },
    {
      name: "101",
      change: (o) => (tmpl(o).capacity = { criticalPercent: 101 }),
      problems: [[`${T}.capacity.criticalPercent`, "must be between 1 and 100 (got 101)"]],
      apiServer: { rejects: "should be less than or equal to 100" },
    },
  ],
  "metadata-size": [
    {
      name: "2Mi and 16Gi",
      change: (o) => {
        dc0(o).thin.metadataSize = "2Mi";
        addClass(o, thin("b", "othervg", { metadataSize: "16Gi" }));
      },
      problems: [],
    },
    {
      name: "1Mi",
      change: (o) => (dc0(o).thin.metadataSize = "1Mi"),
      problems: [[`${DC}[0].thin.metadataSize`, 'must be between 2Mi and 16Gi (got "1Mi")']],
      apiServer: "accepts",
    },
    {
      name: "17Gi",
      change: (o) => (dc0(o).thin.metadataSize = "17Gi"),
      problems: [[`${DC}[0].thin.metadataSize`, 'must be between 2Mi and 16Gi (got "17Gi")']],
      apiServer: "accepts",
    },
  ],
  "quantities-exact": [
    {
      name: "1.5Gi, 1e9 and 500M",
      change: (o) => {
        tmpl(o).volumeGroups[0].minDeviceSize = "1.5Gi";
        tmpl(o).volumeGroups[1].minDeviceSize = "1e9";
        tmpl(o).volumeGroups[2].minDeviceSize = "500M";
      },
      problems: [],
    },
    {
      name: "half a byte",
      change: (o) => (tmpl(o).volumeGroups[0].minDeviceSize = "0.5"),
      problems: [[`${VG}[0].minDeviceSize`, 'must be a whole number of bytes (got "0.5")']],
      apiServer: "accepts",
    },
    {
      name: "milli-bytes",
      change: (o) => (tmpl(o).volumeGroups[0].minDeviceSize = "100m"),
      problems: [[`${VG}[0].minDeviceSize`, 'must be a whole number of bytes (got "100m")']],
      apiServer: "accepts",
    },
    {
      name: "a negative size",
      change: (o) => (tmpl(o).volumeGroups[0].minDeviceSize = "-1Gi"),
      problems: [[`${VG}[0].minDeviceSize`, 'must not be negative (got "-1Gi")']],
      apiServer: "accepts",
    },
    {
      name: "1Ei, beyond 2^53 bytes",
      change: (o) => (tmpl(o).volumeGroups[0].minDeviceSize = "1Ei"),
      problems: [[`${VG}[0].minDeviceSize`, 'is too large (got "1Ei")']],
      apiServer: "accepts",
    },
    {
      name: "not a quantity",
      change: (o) => (tmpl(o).volumeGroups[0].minDeviceSize = "10 GB"),
      problems: [[`${VG}[0].minDeviceSize`, QUANTITY("10 GB")]],
      apiServer: { rejects: "should match" },
    },
    {
      name: "a number, not a string",
      change: (o) => (tmpl(o).volumeGroups[0].minDeviceSize = 1000),
      problems: [[`${VG}[0].minDeviceSize`, 'must be a quantity string such as "30Gi" (got 1000)']],
      apiServer: { rejects: "must be of type string" },
    },
  ],
  "naming-explicit-needs-name": [
    {
      name: "Explicit with a name",
      change: (o) => (dc0(o).storageClass = { namingPolicy: "Explicit", name: "fast-local" }),
      problems: [],
    },
    {
      name: "Explicit without a name",
      change: (o) => (dc0(o).storageClass = { namingPolicy: "Explicit" }),
      problems: [[`${DC}[0].storageClass.name`, "namingPolicy Explicit needs name"]],
      apiServer: { rejects: "namingPolicy Explicit needs name" },
    },
  ],
  "naming-name-only-explicit": [
    {
      name: "a name without a naming policy",
      change: (o) => (dc0(o).snapshotClass = { name: "snap" }),
      problems: [[`${DC}[0].snapshotClass.name`, "name is only used with namingPolicy Explicit"]],
      apiServer: { rejects: "name is only used with namingPolicy Explicit" },
    },
    {
      name: "a name with Prefixed",
      change: (o) => (dc0(o).storageClass.name = "fast"),
      problems: [[`${DC}[0].storageClass.name`, "name is only used with namingPolicy Explicit"]],
      apiServer: { rejects: "name is only used with namingPolicy Explicit" },
    },
    {
      name: "a misspelt policy is reported alone",
      change: (o) => (dc0(o).storageClass = { namingPolicy: "explicit", name: "fast" }),
      problems: [
        [`${DC}[0].storageClass.namingPolicy`, 'must be one of "Prefixed", "Explicit" (got "explicit")'],
      ],
      apiServer: { rejects: "Unsupported value" },
    },
  ],
  "naming-prefix-only-prefixed": [
    {
      name: "Explicit with a prefix",
      change: (o) => (dc0(o).snapshotClass = { namingPolicy: "Explicit", name: "snap", prefix: "lvms" }),
      problems: [[`${DC}[0].snapshotClass.prefix`, "prefix is only used with namingPolicy Prefixed"]],
      apiServer: { rejects: "prefix is only used with namingPolicy Prefixed" },
    },
  ],
  "device-selector-size": [
    {
      name: "1024 values in 4 terms",
      change: (o) =>
        (tmpl(o).volumeGroups[0].deviceSelector.deviceSelectorTerms = manyValueTerms(
          1024,
          "serial",
          (i) => `s${i}`,
        )),
      problems: [],
    },
    {
      name: "1025 values in 5 terms",
      change: (o) =>
        (tmpl(o).volumeGroups[0].deviceSelector.deviceSelectorTerms = manyValueTerms(
          1025,
          "serial",
          (i) => `s${i}`,
        )),
      problems: [
        [
          `${VG}[0].deviceSelector.deviceSelectorTerms`,
          "a device selector holds at most 1024 values in all its terms together (got 1025)",
        ],
      ],
      apiServer: { rejects: "a device selector holds at most 1024 values in all its terms together" },
    },
  ],
  "device-term-not-empty": [
    {
      name: "a term without expressions",
      change: (o) => (deviceExprs(o, 0).length = 0),
      problems: [
        [
          `${VG}[0].deviceSelector.deviceSelectorTerms[0].matchExpressions`,
          "a device selector term needs at least one expression (an empty term would match every disk)",
        ],
      ],
      apiServer: {
        rejects:
          "a device selector term needs at least one expression (an empty term would match every disk)",
      },
    },
    {
      name: "no terms",
      change: (o) => (tmpl(o).volumeGroups[0].deviceSelector.deviceSelectorTerms = []),
      problems: [[`${VG}[0].deviceSelector.deviceSelectorTerms`, "needs at least 1 item"]],
      apiServer: { rejects: "should have at least 1 items" },
    },
  ],
  "device-values-in": [
    {
      name: "In without values",
      change: (o) => delete deviceExprs(o, 0)[0].values,
      problems: [[`${DEVICE_EXPR(0, 0)}.values`, "In needs at least one value"]],
      apiServer: { rejects: "In and NotIn need at least one value" },
    },
    {
      name: "NotIn with an empty list",
      change: (o) => deviceExprs(o, 1).push({ key: "model", operator: "NotIn", values: [] }),
      problems: [[`${DEVICE_EXPR(1, 2)}.values`, "NotIn needs at least one value"]],
      apiServer: { rejects: "In and NotIn need at least one value" },
    },
  ],
  "device-values-none": [
    {
      name: "Exists with an empty list",
      change: (o) => deviceExprs(o, 1).push({ key: "wwn", operator: "Exists", values: [] }),
      problems: [],
    },
    {
      name: "Any with a value",
      change: (o) => (deviceExprs(o, 1)[0].values = ["sda"]),
      problems: [[`${DEVICE_EXPR(1, 0)}.values`, "Any takes no values (got 1)"]],
      apiServer: { rejects: "Any, Exists and DoesNotExist take no values" },
    },
    {
      name: "DoesNotExist with values",
      change: (o) =>
        deviceExprs(o, 2).push({ key: "partlabel", operator: "DoesNotExist", values: ["a", "b"] }),
      problems: [[`${DEVICE_EXPR(2, 1)}.values`, "DoesNotExist takes no values (got 2)"]],
      apiServer: { rejects: "Any, Exists and DoesNotExist take no values" },
    },
  ],
  "device-values-one": [
    {
      name: "GreaterThan with two values",
      change: (o) => (deviceExprs(o, 1)[1].values = ["1Gi", "2Gi"]),
      problems: [[`${DEVICE_EXPR(1, 1)}.values`, "GreaterThan takes exactly one value (got 2)"]],
      apiServer: { rejects: "GreaterThan and LessThan take exactly one value" },
    },
    {
      name: "LessThan without values",
      change: (o) => deviceExprs(o, 1).push({ key: "size", operator: "LessThan" }),
      problems: [[`${DEVICE_EXPR(1, 2)}.values`, "LessThan takes exactly one value (got 0)"]],
      apiServer: { rejects: "GreaterThan and LessThan take exactly one value" },
    },
  ],
  "device-compare-keys": [
    {
      name: "LessThan on rotational",
      change: (o) => deviceExprs(o, 1).push({ key: "rotational", operator: "LessThan", values: ["1"] }),
      problems: [],
    },
    {
      name: "GreaterThan on serial",
      change: (o) => (deviceExprs(o, 1)[1].key = "serial"),
      problems: [
        [
          `${DEVICE_EXPR(1, 1)}.operator`,
          'GreaterThan only applies to "size" and "rotational" (got key "serial")',
        ],
      ],
      apiServer: { rejects: "GreaterThan and LessThan only apply to size and rotational" },
    },
  ],
  "device-size-quantity": [
    {
      name: "a size in GB",
      change: (o) => (deviceExprs(o, 1)[1].values = ["30GB"]),
      problems: [[`${DEVICE_EXPR(1, 1)}.values[0]`, QUANTITY("30GB")]],
      apiServer: "accepts",
    },
    {
      name: "a fractional size",
      change: (o) => (deviceExprs(o, 1)[1].values = ["0.5"]),
      problems: [[`${DEVICE_EXPR(1, 1)}.values[0]`, 'must be a whole number of bytes (got "0.5")']],
      apiServer: "accepts",
    },
  ],
  "device-rotational-values": [
    {
      name: "true and 0",
      change: (o) => deviceExprs(o, 1).push({ key: "rotational", operator: "In", values: ["true", "0"] }),
      problems: [],
    },
    {
      name: "yes",
      change: (o) => deviceExprs(o, 1).push({ key: "rotational", operator: "In", values: ["false", "yes"] }),
      problems: [[`${DEVICE_EXPR(1, 2)}.values[1]`, 'rotational is "true" or "false" (got "yes")']],
      apiServer: "accepts",
    },
  ],
  "node-selector-size": [
    {
      name: "1024 values in 4 terms",
      change: (o) => (o.spec.nodeSelector.nodeSelectorTerms = manyValueTerms(1024, "zone", (i) => `z${i}`)),
      problems: [],
    },
    {
      name: "1025 values in 5 terms",
      change: (o) => (o.spec.nodeSelector.nodeSelectorTerms = manyValueTerms(1025, "zone", (i) => `z${i}`)),
      problems: [
        [
          "spec.nodeSelector.nodeSelectorTerms",
          "a node selector holds at most 1024 values in all its terms together (got 1025)",
        ],
      ],
      apiServer: { rejects: "a node selector holds at most 1024 values in all its terms together" },
    },
  ],
  "node-term-not-empty": [
    {
      name: "an empty term",
      change: (o) => (o.spec.nodeSelector.nodeSelectorTerms[0] = {}),
      problems: [[NODE_TERM, "a node selector term needs at least one matchExpression or matchField"]],
      apiServer: { rejects: "a node selector term needs at least one matchExpression or matchField" },
    },
    {
      name: "empty lists",
      change: (o) => (o.spec.nodeSelector.nodeSelectorTerms[0] = { matchExpressions: [], matchFields: [] }),
      problems: [[NODE_TERM, "a node selector term needs at least one matchExpression or matchField"]],
      apiServer: { rejects: "a node selector term needs at least one matchExpression or matchField" },
    },
  ],
  "node-values-in": [
    {
      name: "NotIn with a value",
      change: (o) => nodeExpr(o, { key: "zone", operator: "NotIn", values: ["a"] }),
      problems: [],
    },
    {
      name: "In without values",
      change: (o) => nodeExpr(o, { key: "zone", operator: "In", values: [] }),
      problems: [[`${NODE_TERM}.matchExpressions[0].values`, "In needs at least one value"]],
      apiServer: { rejects: "In and NotIn need at least one value" },
    },
  ],
  "node-values-none": [
    { name: "Exists", change: (o) => nodeExpr(o, { key: "zone", operator: "Exists" }), problems: [] },
    {
      name: "DoesNotExist with a value",
      change: (o) => nodeExpr(o, { key: "zone", operator: "DoesNotExist", values: ["a"] }),
      problems: [[`${NODE_TERM}.matchExpressions[0].values`, "DoesNotExist takes no values (got 1)"]],
      apiServer: { rejects: "Exists and DoesNotExist take no values" },
    },
  ],
  "node-values-one": [
    {
      name: "Gt 5",
      change: (o) => nodeExpr(o, { key: "cores", operator: "Gt", values: ["5"] }),
      problems: [],
    },
    {
      name: "Gt with two values",
      change: (o) => nodeExpr(o, { key: "cores", operator: "Gt", values: ["1", "2"] }),
      problems: [[`${NODE_TERM}.matchExpressions[0].values`, "Gt takes exactly one value (got 2)"]],
      apiServer: { rejects: "Gt and Lt take exactly one value" },
    },
    {
      name: "Lt with a word",
      change: (o) => nodeExpr(o, { key: "cores", operator: "Lt", values: ["many"] }),
      problems: [[`${NODE_TERM}.matchExpressions[0].values[0]`, 'Lt needs an integer (got "many")']],
      apiServer: "accepts",
    },
  ],
  "node-labels": [
    {
      name: "a prefixed key and an empty value",
      change: (o) => nodeExpr(o, { key: "example.com/storage-tier", operator: "In", values: ["fast", ""] }),
      problems: [],
    },
    {
      name: "a key starting with '-'",
      change: (o) => nodeExpr(o, { key: "-zone", operator: "Exists" }),
      problems: [[`${NODE_TERM}.matchExpressions[0].key`, LABEL_KEY("-zone")]],
      apiServer: "accepts",
    },
    {
      name: "an upper-case key prefix",
      change: (o) => nodeExpr(o, { key: "Example.com/zone", operator: "Exists" }),
      problems: [
        [
          `${NODE_TERM}.matchExpressions[0].key`,
          `must be a label key: its prefix must be a DNS-1123 subdomain (got "Example.com/zone")`,
        ],
      ],
      apiServer: "accepts",
    },
    {
      name: "a value with a space",
      change: (o) => nodeExpr(o, { key: "zone", operator: "In", values: ["east 1"] }),
      problems: [
        [
          `${NODE_TERM}.matchExpressions[0].values[0]`,
          `must be a label value: at most 63 letters, digits, '-', '_' or '.', starting and ending with a letter or digit (got "east 1")`,
        ],
      ],
      apiServer: "accepts",
    },
  ],
  "node-match-fields": [
    {
      name: "one node by name",
      change: (o) => nodeField(o, { key: "metadata.name", operator: "In", values: ["node-1"] }),
      problems: [],
    },
    {
      name: "a label as a field",
      change: (o) => nodeField(o, { key: "metadata.labels", operator: "In", values: ["a"] }),
      problems: [
        [`${NODE_TERM}.matchFields[0].key`, 'only "metadata.name" is supported (got "metadata.labels")'],
      ],
      apiServer: {
        rejects: "matchFields only supports metadata.name with In or NotIn and exactly one value",
      },
    },
    {
      name: "Exists",
      change: (o) => nodeField(o, { key: "metadata.name", operator: "Exists" }),
      problems: [
        [`${NODE_TERM}.matchFields[0].operator`, 'matchFields only supports In and NotIn (got "Exists")'],
      ],
      apiServer: {
        rejects: "matchFields only supports metadata.name with In or NotIn and exactly one value",
      },
    },
    {
      name: "two node names",
      change: (o) => nodeField(o, { key: "metadata.name", operator: "NotIn", values: ["a", "b"] }),
      problems: [
        [`${NODE_TERM}.matchFields[0].values`, "matchFields NotIn takes exactly one node name (got 2)"],
      ],
      apiServer: {
        rejects: "matchFields only supports metadata.name with In or NotIn and exactly one value",
      },
    },
    {
      name: "an invalid node name",
      change: (o) => nodeField(o, { key: "metadata.name", operator: "In", values: ["Node_1"] }),
      problems: [
        [
          `${NODE_TERM}.matchFields[0].values[0]`,
          `a node name must be a DNS-1123 subdomain: lowercase letters, digits, '-' and '.' (got "Node_1")`,
        ],
      ],
      apiServer: "accepts",
    },
  ],
  "condition-fields": [
    {
      name: "reason, message and observedGeneration",
      change: (o) =>
        Object.assign(o.status.conditions[0], {
          reason: "AllNodesReady",
          message: "2 of 2",
          observedGeneration: 3,
        }),
      problems: [],
    },
    {
      name: "a lower-case status",
      change: (o) => (o.status.conditions[0].status = "true"),
      problems: [["status.conditions[0].status", 'must be one of "True", "False", "Unknown" (got "true")']],
      apiServer: { rejects: "Unsupported value" },
    },
    {
      name: "a time without a time zone",
      base: "LVMNode",
      change: (o) => (o.status.conditions[1].lastTransitionTime = "2044-10-22T16:29:24"),
      problems: [
        [
          "status.conditions[1].lastTransitionTime",
          'must be an RFC 3339 date-time with a time zone, such as "2044-10-22T16:29:24Z" (got "2044-10-22T16:29:24")',
        ],
      ],
      apiServer: { rejects: "must be of type date-time" },
    },
    {
      name: "not a time",
      change: (o) => (o.status.conditions[0].lastTransitionTime = "yesterday"),
      problems: [
        [
          "status.conditions[0].lastTransitionTime",
          'must be an RFC 3339 date-time with a time zone, such as "2044-10-22T16:29:24Z" (got "yesterday")',
        ],
      ],
      apiServer: { rejects: "date-time" },
    },
    {
      name: "a repeated condition type",
      change: (o) => (o.status.conditions[1].type = "LVMNodesReady"),
      problems: [
        ["status.conditions[1].type", 'duplicate condition type "LVMNodesReady" (also conditions[0])'],
      ],
      apiServer: { rejects: "Duplicate value" },
    },
  ],
};
