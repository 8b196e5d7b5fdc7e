import { GROUP_VERSION, TEMPLATE_GENERATION_ANNOTATION, type LVMNodeSpec } from "../../api";
import { matchesNodeSelector } from "../../planner/node-selector";
import { controllerReference } from "../ownership";
import type { LVMNodeObject, LVMNodeSetObject, NodeObject } from "../types";

/**
 * The names of the nodes `set` selects, sorted: nodes its nodeSelector matches (no selector: every
 * node), leaving out nodes being deleted.
 */
export function selectedNodes(set: LVMNodeSetObject, nodes: readonly NodeObject[]): string[] {
  return nodes
    .filter((n) => !n.metadata.deletionTimestamp)
    .filter((n) =>
      matchesNodeSelector(set.spec.nodeSelector, { name: n.metadata.name, labels: n.metadata.labels ?? {} }),
    )
    .map((n) => n.metadata.name)
    .sort();
}

/** An LVMNode's spec is the set's template, as it is (defaults stay unwritten, as everywhere in this API). */
export function desiredSpec(set: LVMNodeSetObject): LVMNodeSpec {
  return JSON.parse(JSON.stringify(set.spec.template)) as LVMNodeSpec;
}

/**
 * The LVMNode of `node`: named after the node (as the proposal shows), in the set's namespace
 * (owner references do not cross namespaces), controlled by the set; annotated with the set's
 * template generation it carries, when given.
 */
export function desiredLVMNode(
  set: LVMNodeSetObject,
  node: string,
  templateGeneration?: number,
): LVMNodeObject {
  return {
    apiVersion: GROUP_VERSION,
    kind: "LVMNode",
    metadata: {
      name: node,
      namespace: set.metadata.namespace ?? "",
      ownerReferences: [controllerReference(set)],
      ...(templateGeneration === undefined
        ? {}
        : { annotations: { [TEMPLATE_GENERATION_ANNOTATION]: String(templateGeneration) } }),
    },
    spec: desiredSpec(set),
  };
}
