import {
  DEFAULTS,
  ValidationError,
  type DeviceClass,
  type NodeSelector,
  type ValidationProblem,
} from "../api";
import { lvmdConfigFor } from "../planner/lvmd";
import type { LvmdDeviceClass } from "../planner/types";
import { exclusivePlacements, unionOf, type Placement } from "./lvmd-placement";
import { isPlainObject } from "./validate-args";

/** A node set as TopoLVM sees it: which nodes, which device classes. */
export interface LvmdNodeSet {
  /** metadata.name of the LVMNodeSet. @example "edge-north" */
  readonly name: string;
  /** Which nodes it selects (core/v1 NodeSelector, validated). @default every node */
  readonly nodeSelector?: NodeSelector;
  /** Its template's device classes (validated). @default [] */
  readonly deviceClasses?: readonly DeviceClass[];
}

/** Inputs of planTopolvm. */
export interface TopolvmValuesArgs {
  /** Every node set of the cluster: a node that two of them select gets no lvmd from either. */
  readonly nodeSets: readonly LvmdNodeSet[];
  /**
   * Where the agents run (LvmSystem's nodeSelector): lvmd and topolvm-node run only there, since
   * only there are volume groups built.
   * @default { "kubernetes.io/os": "linux" }
   */
  readonly agentNodeSelector?: Readonly<Record<string, string>>;
  /** Taints lvmd and topolvm-node tolerate: the agents' (core/v1 Tolerations). @default [] */
  readonly tolerations?: ReadonlyArray<Readonly<Record<string, unknown>>>;
  /** The user's extra chart values; they may not set the keys listed in OWNED_VALUES. @default {} */
  readonly values?: Readonly<Record<string, unknown>>;
}

/** One lvmd of the chart (a DaemonSet and its ConfigMap): one node set's classes on its nodes. */
export interface LvmdConfig {
  readonly nodeSet: string;
  readonly placement: Placement;
  readonly deviceClasses: readonly LvmdDeviceClass[];
}

export interface TopolvmPlan {
  /** The chart values. */
  readonly values: Record<string, unknown>;
  /** The lvmd configurations in chart order: `lvmd` itself, then `lvmd.additionalConfigs`. */
  readonly lvmds: readonly LvmdConfig[];
  /** Pairs of node sets that may select one node (sorted names); such a node gets no lvmd. */
  readonly overlaps: ReadonlyArray<readonly [string, string]>;
  /** Why these values cannot be right, with paths under `at`. */
  readonly problems: readonly ValidationProblem[];
}

/**
 * TopoLVM's chart values for these node sets (docs/components.md, "TopoLVM and lvmd"): one lvmd
 * configuration per node set with device classes, each with exactly that set's classes (the
 * planner's own mapping, the one the agents write to lvmd.yaml) and a node affinity for exactly the
 * nodes that this set and no other selects; topolvm-node on the union of those nodes; lvmd's socket
 * where the agents and topolvm-node expect it; no chart StorageClasses (the DeviceClass components
 * create them). The lvmd configurations are ordered by node set name, so the values do not depend on
 * the order the node sets are listed in. The user's values go under ours; setting one of ours is a
 * problem, not silently overridden.
 */
export function planTopolvm(args: TopolvmValuesArgs, at = "topolvm"): TopolvmPlan {
  const problems: ValidationProblem[] = [
    ...duplicateNames(args.nodeSets, at),
    ...ownedValueProblems(args, at),
  ];
  const placed = exclusivePlacements(args.nodeSets, `${at}.nodeSets`);
  problems.push(...placed.problems);
  const lvmds = args.nodeSets
    .map((set, i) => ({
      nodeSet: set.name,
      placement: placed.placements[i]!,
      deviceClasses: lvmdDeviceClasses(set.deviceClasses ?? []),
    }))
    .filter((l) => l.deviceClasses.length > 0 && l.placement.kind !== "no-node")
    .sort((a, b) => (a.nodeSet < b.nodeSet ? -1 : a.nodeSet > b.nodeSet ? 1 : 0));
  if (lvmds.length === 0 && placed.problems.length === 0) problems.push(noLvmdProblem(args.nodeSets, at));
  const overlaps = placed.overlaps
    .map(([i, j]) => [args.nodeSets[i]!.name, args.nodeSets[j]!.name].sort() as [string, string])
    .sort(([a1, b1], [a2, b2]) => a1.localeCompare(a2) || b1.localeCompare(b2));
  return { values: chartValues(args, lvmds), lvmds, overlaps, problems };
}

/** planTopolvm's values; throws a ValidationError listing the problems when there are any. */
export function topolvmValues(args: TopolvmValuesArgs): Record<string, unknown> {
  const plan = planTopolvm(args);
  if (plan.problems.length) throw new ValidationError("topolvmValues", plan.problems);
  return plan.values;
}

/**
 * lvmd.yaml `device-classes` entries for our device classes: the planner's own mapping (the same
 * the agents write to lvmd.yaml), so the chart's lvmd and the agents agree.
 */
export function lvmdDeviceClasses(deviceClasses: readonly DeviceClass[]): LvmdDeviceClass[] {
  return [
    ...lvmdConfigFor({ volumeGroups: [], deviceClasses: [...deviceClasses] }, () => true)["device-classes"],
  ];
}

/**
 * Chart values LvmSystem derives, and why. Each lvmd configuration's placement and classes come
 * from the node sets; a user value for one of them would silently break the one-lvmd-per-node rule.
 */
export const OWNED_VALUES: ReadonlyArray<readonly [path: string, reason: string]> = [
  ["lvmd.managed", "each node set's lvmd runs as its own DaemonSet of the chart"],
  ["lvmd.socketName", `the agents and topolvm-node expect lvmd's socket at ${DEFAULTS.lvmdSocket}`],
  ["lvmd.deviceClasses", "each node set's device classes come from its template (topolvm.nodeSets)"],
  ["lvmd.additionalConfigs", "each node set's device classes come from its template (topolvm.nodeSets)"],
  ["lvmd.nodeSelector", "lvmd runs on the agents' nodes (nodeSelector)"],
  ["lvmd.affinity", "each node set's lvmd runs on exactly the nodes it selects (topolvm.nodeSets)"],
  ["lvmd.tolerations", "lvmd tolerates the agents' taints (tolerations)"],
  ["node.lvmdEmbedded", "lvmd runs as DaemonSets, one per node set, not inside topolvm-node"],
  ["node.lvmdSocket", `the agents and topolvm-node expect lvmd's socket at ${DEFAULTS.lvmdSocket}`],
  ["node.nodeSelector", "topolvm-node runs on the agents' nodes (nodeSelector)"],
  ["node.affinity", "topolvm-node runs on exactly the nodes that have an lvmd (topolvm.nodeSets)"],
  ["node.tolerations", "topolvm-node tolerates the agents' taints (tolerations)"],
  ["storageClasses", "the DeviceClass components create the StorageClasses"],
];

/** lvmd values that configure one lvmd, which LvmSystem copies to every node set's lvmd. */
const PER_LVMD_VALUES = ["lvcreateOptionClasses", "additionalLVMDYamlContent"] as const;

const DEFAULT_AGENT_NODE_SELECTOR = { "kubernetes.io/os": "linux" };

/**
 * Helm's "do not delete" annotation, which kubernetes.helm.v4.Chart turns into retainOnDelete. On
 * TopoLVM's LogicalVolume CRD it is what keeps `pulumi destroy` (deletionPolicy Retain) from deleting
 * every LogicalVolume with the CRD: TopoLVM's finalizer then removes their LVs (the volumes' data) if
 * its controller still runs, or the CRD's deletion hangs forever if it does not (found by the journey,
 * test/journey). The chart has `crd.annotations` since 11.x.
 */
export const KEEP_ANNOTATION = ["helm.sh/resource-policy", "keep"] as const;

function chartValues(args: TopolvmValuesArgs, lvmds: readonly LvmdConfig[]): Record<string, unknown> {
  const nodeSelector = { ...(args.agentNodeSelector ?? DEFAULT_AGENT_NODE_SELECTOR) };
  const tolerations = [...(args.tolerations ?? [])];
  const userLvmd = (args.values?.["lvmd"] ?? {}) as Record<string, unknown>;
  const shared = Object.fromEntries(
    PER_LVMD_VALUES.flatMap((k) => (k in userLvmd ? [[k, userLvmd[k]]] : [])),
  );
  const lvmdValues = (l: LvmdConfig) => ({
    deviceClasses: l.deviceClasses,
    nodeSelector,
    tolerations,
    affinity: affinityOf(l.placement),
  });
  const [first, ...rest] = lvmds;
  const ours = {
    lvmd: {
      managed: true,
      socketName: DEFAULTS.lvmdSocket,
      ...(first ? lvmdValues(first) : {}),
      additionalConfigs: rest.map((l) => ({ ...lvmdValues(l), ...shared })),
    },
    node: {
      lvmdEmbedded: false,
      lvmdSocket: DEFAULTS.lvmdSocket,
      nodeSelector,
      tolerations,
      affinity: affinityOf(unionOf(lvmds.map((l) => l.placement))),
    },
    storageClasses: [],
    crd: { annotations: { [KEEP_ANNOTATION[0]]: KEEP_ANNOTATION[1] } },
  };
  return mergeValues(args.values ?? {}, ours);
}

/** A pod's affinity for a placement: required node affinity, or none for every node. */
function affinityOf(placement: Placement): Record<string, unknown> {
  return placement.kind === "nodes"
    ? { nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: placement.nodeSelector } }
    : {};
}

function duplicateNames(sets: readonly LvmdNodeSet[], at: string): ValidationProblem[] {
  const first = new Map<string, number>();
  return sets.flatMap((set, i) => {
    const seen = first.get(set.name);
    if (seen === undefined) {
      first.set(set.name, i);
      return [];
    }
    return [
      {
        path: `${at}.nodeSets[${i}].name`,
        message: `duplicate node set name "${set.name}" (also nodeSets[${seen}])`,
      },
    ];
  });
}

function ownedValueProblems(args: TopolvmValuesArgs, at: string): ValidationProblem[] {
  const owned = OWNED_VALUES.flatMap(([path, reason]) =>
    valueAt(args.values ?? {}, path) === undefined
      ? []
      : [{ path: `${at}.values.${path}`, message: `is set by LvmSystem: ${reason}` }],
  );
  // Other CRD annotations are the user's; this one is not (its key has dots: not a valueAt path).
  const annotations = valueAt(args.values ?? {}, "crd.annotations");
  const keep = isPlainObject(annotations) ? annotations[KEEP_ANNOTATION[0]] : undefined;
  if (keep !== undefined && keep !== KEEP_ANNOTATION[1])
    owned.push({
      path: `${at}.values.crd.annotations["${KEEP_ANNOTATION[0]}"]`,
      message: `is set by LvmSystem to "${KEEP_ANNOTATION[1]}": deleting TopoLVM's LogicalVolume CRD would delete every volume's LogicalVolume, and with it the volume`,
    });
  return owned;
}

function noLvmdProblem(sets: readonly LvmdNodeSet[], at: string): ValidationProblem {
  return sets.some((s) => (s.deviceClasses ?? []).length > 0)
    ? {
        path: `${at}.nodeSets`,
        message:
          "no node would run lvmd: every node a node set with device classes selects is selected by another node set too, and a node belongs to at most one",
      }
    : {
        path: `${at}.nodeSets`,
        message:
          "no node set has a device class, and lvmd refuses to start without one: leave topolvm out until one has",
      };
}

function valueAt(values: Readonly<Record<string, unknown>>, path: string): unknown {
  let here: unknown = values;
  for (const key of path.split(".")) {
    if (!isPlainObject(here)) return undefined;
    here = here[key];
  }
  return here;
}

/** Deep merge of plain objects; `top` wins, arrays and scalars are replaced, not merged. */
export function mergeValues(
  base: Readonly<Record<string, unknown>>,
  top: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const out: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(top)) {
    const under = out[key];
    out[key] = isPlainObject(under) && isPlainObject(value) ? mergeValues(under, value) : value;
  }
  return out;
}
