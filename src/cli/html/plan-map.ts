import {
  commandText,
  planSummary,
  poolText,
  type DeviceClaim,
  type NodePlan,
  type PlanDocument,
  type ThinPoolPlan,
  type VolumeGroupPlan,
} from "../../planner";
import { formatSize } from "../../planner/units";
import { claimNotes } from "../plan-wide";
import {
  fraction,
  mergeCells,
  type DiskMap,
  type MapBar,
  type MapBarPart,
  type MapCell,
  type MapNode,
} from "./disk-map";

/**
 * The picture of a plan (pure): per node each device claimed (a member already), joining, leaving,
 * excluded or blocked with the planner's reasons; each volume group's size now and after the plan,
 * and its thin pools' targets; the exact commands in order, destructive ones marked.
 */
export function planMap(doc: PlanDocument): DiskMap {
  const sets = [...new Set(doc.nodes.flatMap((n) => n.nodeSet ?? doc.nodeSet ?? []))];
  return {
    title: `pulumi-lvm plan${sets.length ? `: ${sets.map((s) => `LVMNodeSet ${s}`).join(", ")}` : ""}`,
    source: "plan",
    summary: [planSummary(doc)],
    nodes: doc.nodes.map((n) => planNode(n, n.nodeSet ?? doc.nodeSet)),
  };
}

function planNode(node: NodePlan, nodeSet: string | undefined): MapNode {
  const state = !node.selected
    ? "not-selected"
    : node.blocked.length
      ? "blocked"
      : node.actions.length
        ? "planned"
        : "converged";
  const blockedCells: MapCell[] = node.blocked.flatMap((b) =>
    b.device
      ? [{ device: b.device, state: "blocked", reasons: [`${b.volumeGroup ?? "blocked"}: ${b.reason}`] }]
      : [],
  );
  return {
    name: node.node,
    ...(nodeSet !== undefined ? { nodeSet } : {}),
    state,
    cells: mergeCells([...node.volumeGroups.flatMap(groupCells), ...blockedCells]),
    bars: node.volumeGroups.flatMap(groupBars),
    steps: node.actions.map((a) => ({
      command: commandText(a),
      reason: a.reason,
      destructive: a.destructive === true,
    })),
    notes: [
      ...(node.selected ? [] : ["not selected by the node set's nodeSelector"]),
      ...node.blocked.filter((b) => !b.device).map((b) => `blocked: ${b.reason}`),
    ],
  };
}

function groupCells(vg: VolumeGroupPlan): MapCell[] {
  const claim = (c: DeviceClaim, state: MapCell["state"], what: string): MapCell => ({
    device: c.path ?? c.kname,
    state,
    size: formatSize(c.size),
    reasons: [`${vg.name}: ${[what, ...claimNotes(c)].join("; ")} (${c.id})`],
  });
  return [
    ...vg.claimed.map((c) =>
      c.member
        ? claim(c, "claimed", "a member")
        : claim(c, "joining", vg.exists ? "joins" : "joins (new group)"),
    ),
    ...(vg.leaving ?? []).map((c) =>
      claim(c, "leaving", "leaves: the selector no longer picks it; moved off and removed"),
    ),
    ...vg.excluded.map((e): MapCell => ({
      device: e.path ?? e.kname,
      state: "excluded",
      reasons: e.reasons.map((r) => `${vg.name}: ${r}`),
    })),
  ];
}

/** The group's devices by fate (as parts of what it spans now and after), then its thin pools. */
function groupBars(vg: VolumeGroupPlan): MapBar[] {
  const sum = (cs: readonly DeviceClaim[]) => cs.reduce((s, c) => s + c.size, 0);
  const members = sum(vg.claimed.filter((c) => c.member));
  const joining = sum(vg.claimed.filter((c) => !c.member));
  const leaving = sum(vg.leaving ?? []);
  const whole = members + joining + leaving;
  const now = vg.exists ? `now ${formatSize(members + leaving)}` : "new";
  const group: MapBar = {
    name: vg.name,
    kind: "volume-group",
    text: `${now}, ${formatSize(members + joining)} after the plan`,
    parts: [
      {
        kind: "claimed" as const,
        fraction: fraction(members, whole),
        text: `members ${formatSize(members)}`,
      },
      {
        kind: "joining" as const,
        fraction: fraction(joining, whole),
        text: `joining ${formatSize(joining)}`,
      },
      {
        kind: "leaving" as const,
        fraction: fraction(leaving, whole),
        text: `leaving ${formatSize(leaving)}`,
      },
    ].filter((p) => p.fraction > 0),
  };
  return [group, ...(vg.thinPools ?? []).map((p) => poolBar(vg.name, p))];
}

/** A pool's target: a share of the group ("90%VG"), or its extents now against after. */
function poolBar(vg: string, p: ThinPoolPlan): MapBar {
  const percent = /^(\d+(?:\.\d+)?)%VG$/.exec(p.targetPercent ?? "");
  const parts: MapBarPart[] = percent
    ? [
        {
          kind: "target",
          fraction: fraction(Number(percent[1]), 100),
          text: `${p.targetPercent} after the plan`,
        },
      ]
    : p.targetExtents !== undefined
      ? [
          {
            kind: "claimed",
            fraction: fraction(p.extents ?? 0, p.targetExtents),
            text: `${p.extents ?? 0} extents now`,
          },
          {
            kind: "target",
            fraction: fraction(p.targetExtents - (p.extents ?? 0), p.targetExtents),
            text: `${p.targetExtents} extents after the plan`,
          },
        ]
      : [];
  return {
    name: `${vg}/${p.name}`,
    kind: "thin-pool",
    text: `device class ${p.deviceClass}: ${poolText(p)}`,
    parts: parts.filter((x) => x.fraction > 0),
  };
}
