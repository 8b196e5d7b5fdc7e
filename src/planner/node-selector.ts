import type { NodeSelector } from "../api";

/** What a node selector is evaluated against: the node's labels and its name (metadata.name). */
export interface NodeFacts {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
}

type Requirement = NonNullable<NodeSelector["nodeSelectorTerms"][number]["matchExpressions"]>[number];

/**
 * core/v1 NodeSelector semantics: terms ORed; within a term every matchExpression (on labels) and
 * every matchField (on metadata.name) must hold. NotIn and DoesNotExist hold for a missing label;
 * Gt and Lt compare the label as an integer and fail when it is missing or not one. No selector
 * selects every node.
 */
export function matchesNodeSelector(selector: NodeSelector | undefined, node: NodeFacts): boolean {
  if (!selector) return true;
  return selector.nodeSelectorTerms.some(
    (term) =>
      (term.matchExpressions ?? []).every((r) => holds(r, node.labels[r.key])) &&
      (term.matchFields ?? []).every((r) => holds(r, r.key === "metadata.name" ? node.name : undefined)),
  );
}

function holds(r: Requirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      const integer = /^-?\d+$/;
      if (value === undefined || values.length !== 1 || !integer.test(value) || !integer.test(values[0]!))
        return false;
      const have = BigInt(value);
      const limit = BigInt(values[0]!);
      return r.operator === "Gt" ? have > limit : have < limit;
    }
  }
}
