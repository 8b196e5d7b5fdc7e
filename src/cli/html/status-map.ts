import { parseQuantity } from "../../api/quantity";
import type { LVMNodeObject } from "../../operator/types";
import { formatSize } from "../../planner/units";
import type { NodeView, StatusView } from "../status-view";
import { fraction, mergeCells, type DiskMap, type MapBar, type MapCell, type MapNode } from "./disk-map";

type GroupStatus = NonNullable<NonNullable<LVMNodeObject["status"]>["volumeGroups"]>[number];
type Pending = NonNullable<NonNullable<LVMNodeObject["status"]>["pendingApproval"]>;

/**
 * The picture of the cluster's status (pure): per node each device its volume groups include
 * (claimed) or exclude (with the agent's reasons), the devices a plan waiting for approval would add
 * (joining), and those a blocked plan names (blocked); each group's size and use and each thin pool's
 * data and metadata use as bars; the waiting plan's steps. `view` says which nodes and in what order
 * (statusView); `nodes` are the LVMNodes it was made from, for their devices.
 */
export function statusMap(view: StatusView, nodes: readonly LVMNodeObject[]): DiskMap {
  const objects = new Map(nodes.map((n) => [`${n.metadata.namespace ?? ""}/${n.metadata.name}`, n]));
  const rows = [
    ...view.nodeSets.flatMap((s) => s.nodes.map((n) => [s.name, n] as const)),
    ...view.unowned.map((n) => [undefined, n] as const),
  ];
  const waiting = rows.filter(([, n]) => n.pendingApproval !== undefined).length;
  return {
    title: `pulumi-lvm status${view.nodeSets.length ? `: ${view.nodeSets.map((s) => `LVMNodeSet ${s.namespace}/${s.name}`).join(", ")}` : ""}`,
    source: "status",
    summary: [
      ...view.nodeSets.map(
        (s) =>
          `LVMNodeSet ${s.namespace}/${s.name}: ${s.state ?? "-"}, ${s.readyNodes}/${s.desiredNodes} nodes ready`,
      ),
      `${rows.length} ${rows.length === 1 ? "node" : "nodes"}, ${waiting} with a plan waiting for approval`,
    ],
    nodes: rows.map(([set, n]) => statusNode(n, set, objects.get(`${n.namespace}/${n.node}`))),
  };
}

function statusNode(view: NodeView, nodeSet: string | undefined, object: LVMNodeObject | undefined): MapNode {
  const groups = object?.status?.volumeGroups ?? [];
  const pending = object?.status?.pendingApproval;
  const blocked = blockedReasons(view);
  const cells = mergeCells([...groups.flatMap(groupCells), ...pendingCells(pending)]);
  return {
    name: view.node,
    ...(nodeSet !== undefined ? { nodeSet } : {}),
    state: view.state ?? "-",
    cells: cells.map((c) => blockedCell(c, blocked)),
    bars: groups.flatMap(groupBars),
    steps: (pending?.steps ?? []).map((s) => ({
      command: s.command,
      reason:
        s.why ?? `${s.op}${s.device ? ` on ${s.device}` : ""}${s.volumeGroup ? ` (${s.volumeGroup})` : ""}`,
      destructive: (s.erases?.length ?? 0) > 0 || (s.loses?.length ?? 0) > 0,
    })),
    notes: [
      ...(pending
        ? [`plan ${pending.hash} waits for approval (policy ${pending.policy}) since ${pending.since}`]
        : []),
      ...groups
        .filter((g) => g.state !== "Healthy")
        .map((g) => `${g.name} ${g.state}${g.message ? `: ${g.message}` : ""}`),
      ...view.attention.map(
        (c) => `${c.type} ${c.status} (${c.reason ?? "-"})${c.message ? `: ${c.message}` : ""}`,
      ),
    ],
  };
}

function groupCells(g: GroupStatus): MapCell[] {
  return [
    ...(g.devices?.included ?? []).map((d): MapCell => ({
      device: d.kname,
      state: "claimed",
      ...(d.size ? { size: d.size } : {}),
      reasons: [`${g.name}: a physical volume of the group (${g.state})${d.id ? ` (${d.id})` : ""}`],
    })),
    ...(g.devices?.excluded ?? []).map((d): MapCell => ({
      device: d.kname,
      state: "excluded",
      reasons: d.reasons.map((r) => `${g.name}: ${r}`),
    })),
  ];
}

/** The devices a waiting plan adds ("vg-data: /dev/sdb (wwn:…)"). */
function pendingCells(pending: Pending | undefined): MapCell[] {
  return (pending?.claims ?? []).flatMap((claim): MapCell[] => {
    const m = /^(.+?): (\S+)/.exec(claim);
    if (!m) return [];
    return [
      {
        device: m[2]!,
        state: "joining",
        reasons: [`${m[1]}: joins in the plan waiting for approval (${pending!.hash.slice(0, 12)})`],
      },
    ];
  });
}

/** The reasons of a plan the operator did not apply because it is blocked (Reconciled False PlanBlocked). */
function blockedReasons(view: NodeView): string[] {
  const c = view.attention.find((a) => a.type === "Reconciled" && a.reason === "PlanBlocked");
  const at = c?.message?.indexOf("the plan is blocked: ") ?? -1;
  if (!c?.message || at < 0) return [];
  return c.message.slice(at + "the plan is blocked: ".length).split("; ");
}

/** A device a blocked reason names ("/dev/sdh left the selector …") is blocked, with that reason. */
function blockedCell(cell: MapCell, blocked: readonly string[]): MapCell {
  const names = (r: string) => new RegExp(`(^|[\\s(,])${escapeRegExp(cell.device)}($|[\\s),:;])`).test(r);
  const hits = blocked.filter(names);
  return hits.length
    ? { ...cell, state: "blocked", reasons: [...hits.map((r) => `blocked: ${r}`), ...cell.reasons] }
    : cell;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function bytes(q: string | undefined): number | undefined {
  if (q === undefined) return undefined;
  const r = parseQuantity(q);
  return r.ok ? r.bytes : undefined;
}

function groupBars(g: GroupStatus): MapBar[] {
  const size = bytes(g.size);
  const free = bytes(g.free);
  const used = size !== undefined && free !== undefined ? size - free : undefined;
  const group: MapBar = {
    name: g.name,
    kind: "volume-group",
    text:
      size === undefined
        ? `${g.state}, size not reported`
        : `${g.state}, ${formatSize(size)}${used !== undefined ? `, ${formatSize(used)} used (${Math.round(fraction(used, size) * 100)}%), ${formatSize(free!)} free` : ""}`,
    parts:
      used !== undefined
        ? [{ kind: "used", fraction: fraction(used, size!), text: `used ${formatSize(used)}` }]
        : [],
  };
  const pools = (g.volumes ?? []).map((v): MapBar => {
    const data = v.dataPercent !== undefined ? Number(v.dataPercent) : undefined;
    return {
      name: `${g.name}/${v.name}`,
      kind: "thin-pool",
      text: `${v.size ?? "size not reported"}, data ${v.dataPercent ?? "?"}%, metadata ${v.metadataPercent ?? "?"}%`,
      parts:
        data !== undefined && Number.isFinite(data)
          ? [{ kind: "used", fraction: fraction(data, 100), text: `data ${v.dataPercent}%` }]
          : [],
    };
  });
  return [group, ...pools];
}
