import type { NodeSelector } from "../../api/lvmnodeset";
import { exclusivePlacements, intersectionOf } from "../../components/lvmd-placement";

/**
 * LVMS gives each device class its own node selector, and a node gets every class whose selector
 * picks it. An LVMNodeSet holds a node alone (the admission webhook refuses two sets on one node), so
 * classes whose selectors differ are split into disjoint cells: one per combination of classes, whose
 * selector picks exactly the nodes LVMS gave that combination: the selectors of the combination ANDed,
 * AND NOT any other selector. The selector algebra is lvmd placement's (exact under core/v1
 * semantics, property-tested against the planner's matchesNodeSelector); combinations no node can
 * match (`zone In [a]` and `zone In [b]`) are dropped.
 */

export interface Cell {
  /** Indexes of the classes (into the list given), in order, that every node of the cell gets. */
  readonly classes: readonly number[];
  /** undefined: every node. */
  readonly nodeSelector: NodeSelector | undefined;
}

/** A selector that cannot be split exactly, by the index of its first class. */
export interface CellProblem {
  readonly classIndex: number;
  readonly message: string;
}

const NEGATION =
  "this node selector has Gt or Lt, which cannot be negated exactly (a node whose label is not an integer matches neither), and the node sets of classes that share nodes must exclude it: make the selectors exclude each other with In/NotIn or Exists/DoesNotExist";
const TOO_MANY =
  "the nodes of this combination of classes need too many node selector terms: give classes that share nodes the same selector";

/** Most distinct selectors split into cells (2^n - 1 combinations). */
export const MAX_DISTINCT_SELECTORS = 6;

/** The cells for `selectors` (one per class; undefined: every node), or why they cannot be made. */
export function nodeCells(
  selectors: ReadonlyArray<NodeSelector | undefined>,
): { cells: Cell[] } | { problems: CellProblem[] } {
  const distinct: Array<{ selector: NodeSelector | undefined; classes: number[] }> = [];
  selectors.forEach((selector, i) => {
    const same = distinct.find((d) => sameSelector(d.selector, selector));
    if (same) same.classes.push(i);
    else distinct.push({ selector, classes: [i] });
  });
  if (distinct.length > MAX_DISTINCT_SELECTORS)
    return {
      problems: [
        {
          classIndex: distinct[MAX_DISTINCT_SELECTORS]!.classes[0]!,
          message: `the device classes have ${distinct.length} different node selectors; at most ${MAX_DISTINCT_SELECTORS} are split into node sets automatically: give classes that share nodes the same selector`,
        },
      ],
    };
  const cells: Cell[] = [];
  const problems: CellProblem[] = [];
  for (let mask = 1; mask < 2 ** distinct.length; mask++) {
    const inCell = distinct.filter((_, i) => mask & (1 << i));
    const others = distinct.filter((_, i) => !(mask & (1 << i)));
    let placement = intersectionOf(inCell.map((d) => d.selector));
    // AND NOT each other selector in turn. Of a pair, only the first placement is ours: its problems
    // are a negation of the other set (a path into nodeSets[1]) or too many terms (nodeSets[0].nodeSelector).
    for (const other of others) {
      if (placement.kind === "no-node") break;
      const pair = exclusivePlacements([
        { name: "cell", ...(placement.kind === "nodes" ? { nodeSelector: placement.nodeSelector } : {}) },
        { name: "other", ...(other.selector ? { nodeSelector: other.selector } : {}) },
      ]);
      for (const p of pair.problems) {
        if (p.path.startsWith("nodeSets[1].") && p.path !== "nodeSets[1].nodeSelector")
          problems.push({ classIndex: other.classes[0]!, message: NEGATION });
        else if (p.path === "nodeSets[0].nodeSelector")
          problems.push({ classIndex: inCell[0]!.classes[0]!, message: TOO_MANY });
      }
      placement = pair.placements[0]!;
    }
    if (placement.kind === "no-node") continue;
    cells.push({
      classes: inCell.flatMap((d) => d.classes).sort((a, b) => a - b),
      nodeSelector: placement.kind === "nodes" ? placement.nodeSelector : undefined,
    });
  }
  if (problems.length)
    return { problems: [...new Map(problems.map((p) => [`${p.classIndex}\u0000${p.message}`, p])).values()] };
  // The set of the first class and most classes first: one distinct selector gives one cell.
  cells.sort((a, b) => a.classes[0]! - b.classes[0]! || b.classes.length - a.classes.length);
  return { cells };
}

function sameSelector(a: NodeSelector | undefined, b: NodeSelector | undefined): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}
