import type { ValidationProblem } from "../../api";
import { joinNames, sortNatural } from "../../planner/node-index";
import { matchesNodeSelector, type NodeFacts } from "../../planner/node-selector";
import type { LVMNodeSetObject, NodeObject } from "../types";

/** Node names listed in one message at most; the rest are counted. */
const LISTED = 5;

/**
 * The Nodes `set` newly selects that another set selects too, one problem per other set (a node
 * belongs to at most one node set): what the admission webhook refuses, whatever the sets' ages —
 * an older set widened onto another set's nodes does not take them. On an update (`previous`, the
 * stored set), nodes it selected before are not new: a set that came to overlap through a Node's
 * relabel can still be edited (the operator's tie-break decides those, ownership.ts holdsBefore).
 * Nodes and sets being deleted do not count. Pure.
 */
export function overlapProblems(
  set: LVMNodeSetObject,
  others: readonly LVMNodeSetObject[],
  nodes: readonly NodeObject[],
  previous?: LVMNodeSetObject,
): ValidationProblem[] {
  const facts = nodes
    .filter((n) => !n.metadata.deletionTimestamp)
    .map((n): NodeFacts => ({ name: n.metadata.name, labels: n.metadata.labels ?? {} }));
  const before = (n: NodeFacts) => !!previous?.spec && matchesNodeSelector(previous.spec.nodeSelector, n);
  const mine = facts.filter((n) => matchesNodeSelector(set.spec.nodeSelector, n) && !before(n));
  if (mine.length === 0) return [];
  const key = (s: LVMNodeSetObject) => `${s.metadata.namespace}/${s.metadata.name}`;
  const problems: ValidationProblem[] = [];
  for (const other of [...others].sort((a, b) => (key(a) < key(b) ? -1 : 1))) {
    if (key(other) === key(set) || other.metadata.deletionTimestamp) continue;
    const shared = sortNatural(
      mine.filter((n) => matchesNodeSelector(other.spec?.nodeSelector, n)),
      (n) => n.name,
    ).map((n) => n.name);
    if (shared.length === 0) continue;
    const listed =
      shared.length > LISTED ? [...shared.slice(0, LISTED), `${shared.length - LISTED} more`] : shared;
    problems.push({
      path: "spec.nodeSelector",
      message: `selects ${shared.length === 1 ? "node" : "nodes"} ${joinNames(listed)}, which LVMNodeSet ${key(other)} already selects; a node belongs to at most one node set`,
    });
  }
  return problems;
}
