import type { Condition } from "../api";
import { isControlledBy } from "../operator/ownership";
import type { LVMNodeObject as LVMNode, LVMNodeSetObject as LVMNodeSet } from "../operator/types";

/**
 * What `pulumi-lvm status` shows (pure): each LVMNodeSet with its nodes' storage — state, volume
 * groups (size, free, physical volumes), thin pools (size, data and metadata use), a plan waiting
 * for approval, and every condition that is not as it should be, with its message. The JSON/YAML
 * shape is this (docs/cli.md, Stable shapes).
 */
export interface StatusView {
  readonly nodeSets: readonly NodeSetView[];
  /** LVMNodes that no listed set controls (a set deleted with Retain, or filtered out). */
  readonly unowned: readonly NodeView[];
}

export interface NodeSetView {
  readonly namespace: string;
  readonly name: string;
  readonly state?: string;
  readonly readyNodes: number;
  readonly desiredNodes: number;
  readonly rollout?: {
    readonly updatedNodes: number;
    readonly totalNodes: number;
    readonly templateGeneration?: number;
  };
  /** Conditions that call for a look: Ready not True, any other True but these (e.g. RolloutPaused). */
  readonly attention: readonly ConditionView[];
  readonly nodes: readonly NodeView[];
}

export interface NodeView {
  readonly namespace: string;
  readonly node: string;
  readonly state?: string;
  readonly volumeGroups: ReadonlyArray<{
    readonly name: string;
    readonly state: string;
    readonly size?: string;
    readonly free?: string;
    readonly physicalVolumes: number;
    readonly thinPools: ReadonlyArray<{
      readonly name: string;
      readonly size?: string;
      readonly dataPercent?: string;
      readonly metadataPercent?: string;
    }>;
  }>;
  /** The hash of a plan that waits for approval (`pulumi-lvm approve --node … --hash …`). */
  readonly pendingApproval?: string;
  readonly attention: readonly ConditionView[];
}

export interface ConditionView {
  readonly type: string;
  readonly status: string;
  readonly reason?: string;
  readonly message?: string;
}

/** Conditions whose True is the healthy answer; every other condition is healthy when not True. */
const POSITIVE = new Set([
  "Ready",
  "Reconciled",
  "VolumeGroupsHealthy",
  "DeviceClassesHealthy",
  "ProviderReady",
  "LVMNodesReady",
]);

function attention(conditions: readonly Condition[] | undefined): ConditionView[] {
  return (conditions ?? [])
    .filter((c) => (POSITIVE.has(c.type) ? c.status !== "True" : c.status === "True"))
    .map((c) => ({
      type: c.type,
      status: c.status,
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
    }));
}

function nodeView(n: LVMNode): NodeView {
  return {
    namespace: n.metadata.namespace ?? "",
    node: n.metadata.name,
    ...(n.status?.state ? { state: n.status.state } : {}),
    volumeGroups: (n.status?.volumeGroups ?? []).map((g) => ({
      name: g.name,
      state: g.state,
      ...(g.size ? { size: g.size } : {}),
      ...(g.free ? { free: g.free } : {}),
      physicalVolumes: g.devices?.included?.length ?? 0,
      thinPools: (g.volumes ?? []).map((v) => ({
        name: v.name,
        ...(v.size ? { size: v.size } : {}),
        ...(v.dataPercent ? { dataPercent: v.dataPercent } : {}),
        ...(v.metadataPercent ? { metadataPercent: v.metadataPercent } : {}),
      })),
    })),
    ...(n.status?.pendingApproval ? { pendingApproval: n.status.pendingApproval.hash } : {}),
    attention: attention(n.status?.conditions),
  };
}

/** The view of `sets` and `nodes`, sets and nodes in name order; `nodeFilter` keeps only those nodes. */
export function statusView(
  sets: readonly LVMNodeSet[],
  nodes: readonly LVMNode[],
  nodeFilter?: ReadonlySet<string>,
): StatusView {
  const byName = (a: { metadata: { namespace?: string; name: string } }, b: typeof a) =>
    `${a.metadata.namespace}/${a.metadata.name}` < `${b.metadata.namespace}/${b.metadata.name}` ? -1 : 1;
  const kept = nodes.filter((n) => !nodeFilter || nodeFilter.has(n.metadata.name)).sort(byName);
  return {
    nodeSets: [...sets].sort(byName).map((s) => ({
      namespace: s.metadata.namespace ?? "",
      name: s.metadata.name,
      ...(s.status?.state ? { state: s.status.state } : {}),
      readyNodes: s.status?.readyNodes ?? 0,
      desiredNodes: s.status?.desiredNodes ?? 0,
      ...(s.status?.rollout
        ? {
            rollout: {
              updatedNodes: s.status.rollout.updatedNodes ?? 0,
              totalNodes: s.status.rollout.totalNodes ?? 0,
              ...(s.status.rollout.templateGeneration !== undefined
                ? { templateGeneration: s.status.rollout.templateGeneration }
                : {}),
            },
          }
        : {}),
      attention: attention(s.status?.conditions),
      nodes: kept.filter((n) => isControlledBy(n, s)).map(nodeView),
    })),
    unowned: kept.filter((n) => !sets.some((s) => isControlledBy(n, s))).map(nodeView),
  };
}

/** Whether everything shown is as it should be (nothing for anyone to look at). */
export function allWell(view: StatusView): boolean {
  const nodeWell = (n: NodeView) => n.attention.length === 0 && n.pendingApproval === undefined;
  return (
    view.nodeSets.every((s) => s.attention.length === 0 && s.nodes.every(nodeWell)) &&
    view.unowned.every(nodeWell)
  );
}
