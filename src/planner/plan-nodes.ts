import type { LVMNodeSetSpec, LVMNodeSpec } from "../api";
import type { NodeInventory } from "../inventory/types";
import { joinNames, sortNatural } from "./node-index";
import { matchesNodeSelector } from "./node-selector";
import { planNode, withHash, type PlanOptions } from "./plan-node";
import { PLAN_API_VERSION, type NodePlan, type PlanDocument } from "./types";

/** What planNodes needs of an LVMNodeSet. */
export interface NodeSetInput {
  readonly metadata?: { readonly name?: string };
  readonly spec: LVMNodeSetSpec;
}

export interface PlanNodesOptions {
  /**
   * Options for one node's plan (what its agent read: lvmd.yaml, its journal).
   * @default () => ({})
   */
  readonly optionsFor?: (node: string) => PlanOptions;
}

/**
 * Plans every node of an inventory for one node set, or for several that share the fleet. A node one
 * set's selector picks (by labels and metadata.name) gets planNode with that set's template as its
 * LVMNode spec (and `nodeSet` naming the set when there are several); a node no set picks appears with
 * `selected: false` and nothing else. A node picked by two sets gets no actions, only a blocked entry:
 * a node belongs to at most one node set. Nodes are listed by name. Throws when two nodes share a name.
 */
export function planNodes(
  nodes: readonly NodeInventory[],
  nodeSets: NodeSetInput | readonly NodeSetInput[],
  options: PlanNodesOptions = {},
): PlanDocument {
  const seen = new Set<string>();
  for (const n of nodes) {
    if (seen.has(n.node)) throw new DuplicateNodeError(n.node);
    seen.add(n.node);
  }
  const sets = Array.isArray(nodeSets) ? (nodeSets as readonly NodeSetInput[]) : [nodeSets as NodeSetInput];
  const specs = sets.map((set) => nodeSpecOf(set.spec));
  const names = sets.map((set, i) => set.metadata?.name ?? `nodeSets[${i}]`);
  const sorted = sortNatural(nodes, (n) => n.node);
  const empty = { actions: [], blocked: [], lvmd: { "device-classes": [] }, volumeGroups: [] };
  return {
    apiVersion: PLAN_API_VERSION,
    ...(sets.length === 1 && sets[0]!.metadata?.name ? { nodeSet: sets[0]!.metadata.name } : {}),
    nodes: sorted.map((inventory) => {
      const node = { name: inventory.node, labels: inventory.labels };
      const picking: number[] = [];
      for (let i = 0; i < sets.length; i++)
        if (matchesNodeSelector(sets[i]!.spec.nodeSelector, node)) picking.push(i);
      if (picking.length === 0)
        return withHash({ node: inventory.node, selected: false, ...empty }, undefined);
      if (picking.length > 1)
        return withHash(
          {
            node: inventory.node,
            selected: true,
            ...empty,
            blocked: [
              {
                reason: `node ${inventory.node} is selected by node sets ${joinNames(picking.map((i) => names[i]!))}; a node belongs to at most one node set`,
              },
            ],
          },
          undefined,
        );
      const i = picking[0]!;
      const plan = planNode(inventory, specs[i]!, options.optionsFor?.(inventory.node));
      return sets.length > 1 ? withHash({ ...withoutHash(plan), nodeSet: names[i]! }, specs[i]!) : plan;
    }),
  };
}

function withoutHash(plan: NodePlan): Omit<NodePlan, "hash"> {
  const { hash: _hash, ...rest } = plan;
  return rest;
}

/** Two inventories for one node name. */
export class DuplicateNodeError extends Error {
  constructor(readonly node: string) {
    super(`the inventory has two nodes named ${node}`);
    this.name = "DuplicateNodeError";
  }
}

/** The LVMNode spec each selected node gets: the set's template. */
export function nodeSpecOf(spec: LVMNodeSetSpec): LVMNodeSpec {
  const { volumeGroups, deviceClasses, deletionPolicy } = spec.template;
  return {
    volumeGroups,
    ...(deviceClasses ? { deviceClasses } : {}),
    ...(deletionPolicy ? { deletionPolicy } : {}),
  };
}
