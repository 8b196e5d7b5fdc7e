import { TEMPLATE_GENERATION_ANNOTATION } from "../../api";
import { jsonEqual } from "../../kube/json-equal";
import { desiredLVMNode, desiredSpec, selectedNodes } from "./desired";
import { mergePatch } from "../../kube/merge-patch";
import { controllerOf, describeController, isControlledBy } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";

/** One write to bring the set's LVMNodes to what it says. */
export type Action =
  | { readonly kind: "create"; readonly node: string; readonly object: LVMNodeObject }
  | {
      readonly kind: "update";
      readonly node: string;
      /** A merge patch of the LVMNode: its spec and template generation, guarded by its resourceVersion. */
      readonly patch: unknown;
      /** The spec changes (a rollout admits it); false: only the template generation is recorded. */
      readonly specChange: boolean;
    }
  | { readonly kind: "delete"; readonly node: string; readonly uid: string };

/** A selected node the set must leave alone, and why. */
export interface Conflict {
  readonly node: string;
  readonly message: string;
}

export interface NodeSetPlan {
  /** Nodes the set selects, sorted. */
  readonly selected: readonly string[];
  /** Writes, in node order: creates and updates of selected nodes, then deletes. */
  readonly actions: readonly Action[];
  readonly conflicts: readonly Conflict[];
}

/**
 * What the set needs done, from the set, the nodes and every LVMNode the operator sees (all
 * namespaces). A selected node gets an LVMNode named after it unless another owner has it: an
 * LVMNode of that name in the set's namespace controlled by anything else (another set, or nothing:
 * hand-made LVMNodes are not adopted), or one in another namespace controlled by another set (node
 * sets must not overlap: the LVMNode that holds a node keeps it, whatever the sets' ages,
 * ownership.ts `holdsBefore`). An LVMNode of the set whose spec differs from the template is
 * updated; one whose node is no longer selected is deleted. Only LVMNodes this set controls (by
 * uid) are ever updated or deleted. An LVMNode being deleted is waited for, never re-created over.
 */
export function planNodeSet(
  set: LVMNodeSetObject,
  nodes: readonly NodeObject[],
  lvmNodes: readonly LVMNodeObject[],
  templateGeneration?: number,
): NodeSetPlan {
  const namespace = set.metadata.namespace;
  const selected = selectedNodes(set, nodes);
  const selectedSet = new Set(selected);
  const spec = desiredSpec(set);
  const actions: Action[] = [];
  const conflicts: Conflict[] = [];
  const byName = groupByName(lvmNodes);

  for (const node of selected) {
    const candidates = byName.get(node) ?? [];
    const here = candidates.find((o) => o.metadata.namespace === namespace);
    const elsewhere = candidates.find(
      (o) =>
        o.metadata.namespace !== namespace &&
        controllerOf(o)?.kind === "LVMNodeSet" &&
        !isControlledBy(o, set),
    );
    if (here && !isControlledBy(here, set)) {
      const owner = describeController(here);
      conflicts.push({
        node,
        message:
          owner === "no controller"
            ? `LVMNode ${namespace}/${node} exists without a controlling LVMNodeSet; it is not adopted (delete it, or label node ${node} out of this set)`
            : `node ${node} is already managed by ${owner} (LVMNode ${namespace}/${node}); node sets must not overlap`,
      });
    } else if (elsewhere) {
      conflicts.push({
        node,
        message: `node ${node} is already managed by ${describeController(elsewhere)} (LVMNode ${elsewhere.metadata.namespace}/${node}); node sets must not overlap`,
      });
    } else if (!here) {
      actions.push({ kind: "create", node, object: desiredLVMNode(set, node, templateGeneration) });
    } else if (!here.metadata.deletionTimestamp) {
      const specChange = !jsonEqual(here.spec, spec);
      const stamp = templateGeneration === undefined ? undefined : String(templateGeneration);
      const stamped =
        stamp === undefined || here.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION] === stamp;
      if (specChange || !stamped)
        actions.push({
          kind: "update",
          node,
          specChange,
          patch: {
            metadata: {
              resourceVersion: here.metadata.resourceVersion,
              ...(stamped ? {} : { annotations: { [TEMPLATE_GENERATION_ANNOTATION]: stamp } }),
            },
            ...(specChange ? { spec: mergePatch(here.spec, spec) } : {}),
          },
        });
    }
  }

  for (const o of lvmNodes) {
    if (o.metadata.namespace !== namespace || !isControlledBy(o, set)) continue;
    if (selectedSet.has(o.metadata.name) || o.metadata.deletionTimestamp) continue;
    actions.push({ kind: "delete", node: o.metadata.name, uid: o.metadata.uid ?? "" });
  }
  actions.sort((a, b) => rank(a) - rank(b) || (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
  return { selected, actions, conflicts };
}

/** Deletes of a set being deleted: every LVMNode it controls that is not already going. */
export function planFinalize(set: LVMNodeSetObject, lvmNodes: readonly LVMNodeObject[]): Action[] {
  return lvmNodes
    .filter((o) => o.metadata.namespace === set.metadata.namespace && isControlledBy(o, set))
    .filter((o) => !o.metadata.deletionTimestamp)
    .map((o): Action => ({ kind: "delete", node: o.metadata.name, uid: o.metadata.uid ?? "" }))
    .sort((a, b) => (a.node < b.node ? -1 : a.node > b.node ? 1 : 0));
}

function rank(a: Action): number {
  return a.kind === "delete" ? 1 : 0;
}

function groupByName(lvmNodes: readonly LVMNodeObject[]): Map<string, LVMNodeObject[]> {
  const m = new Map<string, LVMNodeObject[]>();
  for (const o of lvmNodes) m.set(o.metadata.name, [...(m.get(o.metadata.name) ?? []), o]);
  // Deterministic whatever the input order: by namespace.
  for (const list of m.values())
    list.sort((a, b) => ((a.metadata.namespace ?? "") < (b.metadata.namespace ?? "") ? -1 : 1));
  return m;
}
