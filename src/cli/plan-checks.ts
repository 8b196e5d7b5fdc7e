import type { NodeInventory } from "../inventory/types";
import { overlapProblems } from "../operator/admission/overlap";
import type { LVMNodeSetObject, NodeObject } from "../operator/types";
import { matchDeviceSelector, matchesNodeSelector, type PlanDocument } from "../planner";
import type { DeviceRequirement } from "../planner/device-selector";
import { indexNode, type NodeIndex } from "../planner/node-index";
import { EXIT } from "./exit-codes";
import type { FileNodeSet } from "./plan-input";

/** The namespace a set is taken to be applied to when its file names none (kubectl's default). */
export const DEFAULT_NAMESPACE = "default";

/**
 * What the admission webhook (src/operator/admission/overlap.ts, the same function) would refuse if
 * the sets were applied in the order given to a cluster whose Nodes are the inventories' nodes, one
 * line for each set it overlaps, as `<file>: LVMNodeSet/<name>: spec.nodeSelector: <message>`. A
 * new set (no metadata.creationTimestamp) is checked against every set that exists and every new
 * set given before it, whatever their ages, as the webhook does. A set that carries a
 * creationTimestamp (as `kubectl get -o yaml` prints it) was admitted already: of two such sets the
 * older keeps a node both select (the operator's tie-break with no LVMNode yet, ownership.ts), so
 * the younger one is named.
 */
export function overlapLines(sets: readonly FileNodeSet[], nodes: readonly NodeInventory[]): string[] {
  const objects = sets.map(({ set }): LVMNodeSetObject => {
    const meta = set.metadata as typeof set.metadata & { creationTimestamp?: unknown };
    return {
      ...set,
      metadata: {
        ...set.metadata,
        namespace: set.metadata.namespace ?? DEFAULT_NAMESPACE,
        ...(typeof meta.creationTimestamp === "string" ? { creationTimestamp: meta.creationTimestamp } : {}),
      },
    };
  });
  const nodeObjects = nodes.map((n): NodeObject => ({ metadata: { name: n.node, labels: n.labels } }));
  const created = (o: LVMNodeSetObject) => o.metadata.creationTimestamp;
  const existing = objects.filter((o) => created(o) !== undefined);
  return objects.flatMap((set, i) => {
    const since = created(set);
    const others =
      since === undefined
        ? [...existing, ...objects.slice(0, i).filter((o) => created(o) === undefined)]
        : existing.filter((o) => Date.parse(created(o)!) < Date.parse(since));
    return overlapProblems(set, others, nodeObjects).map(
      (p) => `${sets[i]!.file}: LVMNodeSet/${set.metadata.name}: ${p.path}: ${p.message}`,
    );
  });
}

/** The sets whose nodeSelector picks none of the inventories' nodes (a typo in a label, most often). */
export function setsSelectingNoNode(
  sets: readonly FileNodeSet[],
  nodes: readonly NodeInventory[],
): FileNodeSet[] {
  return sets.filter(
    ({ set }) =>
      !nodes.some((n) => matchesNodeSelector(set.spec.nodeSelector, { name: n.node, labels: n.labels })),
  );
}

/** A device selector expression (or one value of an In) that selects no device of a node. */
export interface SelectorMiss {
  readonly node: string;
  readonly nodeSet: string;
  readonly volumeGroup: string;
  /** Where in the set, e.g. "spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions[1]". */
  readonly path: string;
  /** "serial In SN-1", "size GreaterThan 10Ti": the expression, for an In one of its values. */
  readonly expression: string;
}

/** Keys whose In values name a device: the planner already reports those it cannot find ("<value> was not found"). */
const DEVICE_NAME_KEYS = new Set(["kname", "path", "symlink"]);

/**
 * For each selected node of the plan, the device selector expressions of its set's volume groups
 * that select none of the node's devices: for In, each value alone (a serial or model that is not
 * on the node); for the other operators, the expression. Evaluated with the planner's own matcher.
 */
export function selectorMisses(
  doc: PlanDocument,
  sets: readonly FileNodeSet[],
  nodes: readonly NodeInventory[],
): SelectorMiss[] {
  const byName = new Map(nodes.map((n) => [n.node, n]));
  const misses: SelectorMiss[] = [];
  for (const plan of doc.nodes) {
    if (!plan.selected) continue;
    const entry = sets.length === 1 ? sets[0] : sets.find(({ set }) => set.metadata.name === plan.nodeSet);
    const inventory = byName.get(plan.node);
    if (!entry || !inventory) continue; // a node two sets select: blocked, no set's template applies
    let index: NodeIndex | undefined; // built once a node has an expression to look at
    const selects = (r: DeviceRequirement) =>
      matchDeviceSelector(
        { deviceSelectorTerms: [{ matchExpressions: [r] }] },
        (index ??= indexNode(inventory)),
      ).matched.size > 0;
    entry.set.spec.template.volumeGroups.forEach((vg, v) =>
      vg.deviceSelector.deviceSelectorTerms.forEach((term, t) =>
        term.matchExpressions.forEach((r, e) => {
          const path = `spec.template.volumeGroups[${v}].deviceSelector.deviceSelectorTerms[${t}].matchExpressions[${e}]`;
          const miss = (expression: string) =>
            misses.push({
              node: plan.node,
              nodeSet: entry.set.metadata.name,
              volumeGroup: vg.name,
              path,
              expression,
            });
          if (r.operator !== "In") {
            if (!selects(r)) miss([r.key, r.operator, ...(r.values ?? [])].join(" "));
            return;
          }
          if (DEVICE_NAME_KEYS.has(r.key)) return;
          for (const value of r.values ?? [])
            if (!selects({ ...r, values: [value] })) miss(`${r.key} In ${value}`);
        }),
      ),
    );
  }
  return misses;
}

/** "node edge-1: volume group vg-data: serial In SN-1 matches no device on this node (LVMNodeSet/x: <path>)". */
export function missLine(m: SelectorMiss): string {
  return `node ${m.node}: volume group ${m.volumeGroup}: ${m.expression} matches no device on this node (LVMNodeSet/${m.nodeSet}: ${m.path})`;
}

/**
 * The plan's exit code: BLOCKED when a selected node has blocked steps or a set selects no node;
 * with `detailed`, CHANGES when a node has actions (and nothing is blocked); OK otherwise.
 */
export function planExitCode(doc: PlanDocument, setsWithoutNodes: number, detailed: boolean): number {
  const selected = doc.nodes.filter((n) => n.selected);
  if (setsWithoutNodes > 0 || selected.some((n) => n.blocked.length > 0)) return EXIT.BLOCKED;
  if (detailed && selected.some((n) => n.actions.length > 0)) return EXIT.CHANGES;
  return EXIT.OK;
}
