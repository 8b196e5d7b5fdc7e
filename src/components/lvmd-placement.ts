import type { NodeSelector, ValidationProblem } from "../api";

/** A node set as lvmd placement sees it: its name and its core/v1 node selector. */
export interface PlacementNodeSet {
  /** metadata.name of the LVMNodeSet. @example "edge-north" */
  readonly name: string;
  /** Which nodes it selects. @default every node */
  readonly nodeSelector?: NodeSelector;
}

/** Where one node set's lvmd runs: on every node, on the nodes a node selector picks, or nowhere. */
export type Placement =
  | { readonly kind: "every-node" }
  | { readonly kind: "nodes"; readonly nodeSelector: NodeSelector }
  | { readonly kind: "no-node" };

export interface ExclusivePlacements {
  /** Per node set, in input order: the nodes it selects and no other node set selects. */
  readonly placements: readonly Placement[];
  /** Pairs of node sets (input indices, i < j) whose selectors may both pick one node. */
  readonly overlaps: ReadonlyArray<readonly [number, number]>;
  /** What cannot be expressed exactly, with paths under `at`. */
  readonly problems: readonly ValidationProblem[];
}

/** More terms than this in one node affinity is a configuration nobody can review. */
export const MAX_AFFINITY_TERMS = 64;

/**
 * For each node set, a node affinity for the nodes that it selects and that no other node set selects.
 *
 * A node belongs to at most one node set: the planner gives a node that two sets select no actions,
 * only a blocked entry (src/planner/plan-nodes.ts). lvmd follows the same rule, so two lvmd pods
 * never share a node (they would fight over one socket) and no lvmd waits on a node whose volume
 * groups will never be built. The result is exact under core/v1 NodeSelector semantics, the same
 * `matchesNodeSelector` implements: set i's selector AND NOT (any other set's selector), in
 * disjunctive normal form, each term simplified per key (so `zone In [a]` AND `zone NotIn [b]` is
 * `zone In [a]`) and pairs of terms that provably exclude each other skipped.
 *
 * Two cases cannot be expressed exactly and come back as problems: negating Gt or Lt (a node whose
 * label is not an integer matches neither), and a result of more than MAX_AFFINITY_TERMS terms.
 */
export function exclusivePlacements(sets: readonly PlacementNodeSet[], at = "nodeSets"): ExclusivePlacements {
  const terms = sets.map((set) => termsOf(set.nodeSelector));
  const overlaps = new Set<string>();
  const problems: ValidationProblem[] = [];
  const tooMany = (i: number, count: number): Placement => {
    problems.push({
      path: `${at}[${i}].nodeSelector`,
      message: `the nodes only node set "${sets[i]!.name}" selects need ${count} or more node affinity terms (at most ${MAX_AFFINITY_TERMS}): make the node sets' selectors exclude each other on one label`,
    });
    return { kind: "no-node" };
  };
  const placements = sets.map((set, i): Placement => {
    const exclusive: Term[] = [];
    // The other sets' terms in a fixed order (by content, then set name): the result is one of many
    // equivalent forms, and this makes it the same whatever order the sets and terms were listed in.
    const others = terms
      .flatMap((ts, j) => (j === i ? [] : ts.map((other) => ({ j, other, id: idOf(other) }))))
      .sort((a, b) => compareText(a.id, b.id) || compareText(sets[a.j]!.name, sets[b.j]!.name));
    for (const own of terms[i]!) {
      let parts: Term[] = [own];
      for (const { j, other } of others) {
        if (conjoin(own, other) === undefined) continue; // provably no node matches both
        overlaps.add(`${Math.min(i, j)},${Math.max(i, j)}`);
        const negated = negate(other);
        if ("cannot" in negated) {
          const r = negated.cannot;
          problems.push({
            path: `${at}[${j}].${r.path}`,
            message: `${r.operator} cannot be negated exactly in a node affinity (a node whose "${r.key}" label is not an integer matches neither Gt nor Lt), and the lvmd of node set "${set.name}" must exclude the nodes node set "${sets[j]!.name}" selects: make the two selectors exclude each other (e.g. In and NotIn on one label)`,
          });
          return { kind: "no-node" };
        }
        parts = withoutRedundant(
          parts.flatMap((part) => negated.terms.flatMap((n) => present(conjoin(part, n)))),
        );
        // Bound the work: a form this large would hardly shrink below the limit again.
        if (parts.length > 16 * MAX_AFFINITY_TERMS) return tooMany(i, parts.length);
      }
      exclusive.push(...parts);
    }
    const result = withoutRedundant(exclusive);
    if (result.length > MAX_AFFINITY_TERMS) return tooMany(i, result.length);
    if (result.length === 0) return { kind: "no-node" };
    if (result.some((t) => t.length === 0)) return { kind: "every-node" };
    return { kind: "nodes", nodeSelector: { nodeSelectorTerms: result.map(toSelectorTerm) } };
  });
  return {
    placements,
    overlaps: [...overlaps]
      .map((pair) => pair.split(",").map(Number) as [number, number])
      .sort(([a1, b1], [a2, b2]) => a1 - a2 || b1 - b2),
    // Two sets that both need one Gt negated name it once each; identical lines say nothing more.
    problems: [...new Map(problems.map((p) => [`${p.path}\u0000${p.message}`, p])).values()],
  };
}

/** The union of placements: the nodes any of them picks. */
export function unionOf(placements: readonly Placement[]): Placement {
  if (placements.some((p) => p.kind === "every-node")) return { kind: "every-node" };
  const terms = withoutRedundant(
    placements.flatMap((p) =>
      p.kind === "nodes" ? p.nodeSelector.nodeSelectorTerms.map((t) => termOf(t, "")) : [],
    ),
  );
  return terms.length
    ? { kind: "nodes", nodeSelector: { nodeSelectorTerms: terms.map(toSelectorTerm) } }
    : { kind: "no-node" };
}

/**
 * The nodes every one of `selectors` picks (an absent selector picks every node), in the same
 * simplified form as exclusivePlacements' results: terms no node can match are dropped.
 */
export function intersectionOf(selectors: ReadonlyArray<NodeSelector | undefined>): Placement {
  let terms: Term[] = [[]];
  for (const selector of selectors)
    terms = withoutRedundant(terms.flatMap((a) => termsOf(selector).flatMap((b) => present(conjoin(a, b)))));
  if (terms.length === 0) return { kind: "no-node" };
  if (terms.some((t) => t.length === 0)) return { kind: "every-node" };
  return { kind: "nodes", nodeSelector: { nodeSelectorTerms: terms.map(toSelectorTerm) } };
}

/* ------------------------------------------------------------------------ requirements ---- */

type Operator = "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt";

/** One requirement on a label (matchExpressions) or on metadata.name (matchFields). */
interface Requirement {
  readonly on: "label" | "field";
  readonly key: string;
  readonly operator: Operator;
  readonly values?: readonly string[];
  /** Where the user wrote it, under the node set ("nodeSelector.nodeSelectorTerms[0]..."); "" when derived. */
  readonly path: string;
}

/** Requirements ANDed; [] matches every node. */
type Term = readonly Requirement[];

function termsOf(selector: NodeSelector | undefined): Term[] {
  if (!selector) return [[]];
  return selector.nodeSelectorTerms.flatMap((term, k) =>
    present(conjoin(termOf(term, `nodeSelector.nodeSelectorTerms[${k}]`), [])),
  );
}

function termOf(term: NodeSelector["nodeSelectorTerms"][number], at: string): Term {
  const label = (term.matchExpressions ?? []).map((r, m): Requirement => ({
    on: "label",
    ...r,
    path: at && `${at}.matchExpressions[${m}].operator`,
  }));
  const field = (term.matchFields ?? []).map((r, m): Requirement => ({
    on: "field",
    ...r,
    path: at && `${at}.matchFields[${m}].operator`,
  }));
  return [...label, ...field];
}

function toSelectorTerm(term: Term): NodeSelector["nodeSelectorTerms"][number] {
  const plain = ({ key, operator, values }: Requirement) => ({
    key,
    operator,
    ...(values ? { values: [...values] } : {}),
  });
  const matchExpressions = term.filter((r) => r.on === "label").map(plain);
  const matchFields = term.filter((r) => r.on === "field").map(plain);
  return {
    ...(matchExpressions.length ? { matchExpressions } : {}),
    ...(matchFields.length ? { matchFields } : {}),
  };
}

/** A term that can match, as a list of one; none when it cannot. */
function present(term: Term | undefined): Term[] {
  return term ? [term] : [];
}

const OPPOSITE: Partial<Record<Operator, Operator>> = {
  In: "NotIn",
  NotIn: "In",
  Exists: "DoesNotExist",
  DoesNotExist: "Exists",
};

/**
 * NOT term: one single-requirement term per requirement (De Morgan). Gt and Lt have no exact
 * opposite (NOT Gt 4 also holds for a missing label and for a value that is not an integer), so a
 * term with one `cannot` be negated.
 */
function negate(term: Term): { terms: Term[] } | { cannot: Requirement } {
  const terms: Term[] = [];
  for (const r of term) {
    const opposite = OPPOSITE[r.operator];
    if (!opposite) return { cannot: r };
    terms.push([
      { on: r.on, key: r.key, operator: opposite, ...(r.values ? { values: r.values } : {}), path: "" },
    ]);
  }
  return { terms };
}

/**
 * a AND b as one canonical term: requirements folded per key and sorted; undefined when no node can
 * match both (e.g. `In [a]` and `NotIn [a]`, `Exists` and `DoesNotExist`, `Gt 4` and `Lt 5`).
 * Paths are kept from the first requirement of each key, for messages.
 */
function conjoin(a: Term, b: Term): Term | undefined {
  const byKey = new Map<string, Requirement[]>();
  for (const r of [...a, ...b]) {
    const id = `${r.on}\u0000${r.key}`;
    byKey.set(id, [...(byKey.get(id) ?? []), r]);
  }
  const out: Requirement[] = [];
  for (const requirements of byKey.values()) {
    const folded = requirements[0]!.on === "label" ? foldLabel(requirements) : foldName(requirements);
    if (!folded) return undefined;
    out.push(...folded);
  }
  return out.sort(compareRequirements);
}

const INTEGER = /^-?\d+$/;

/** The requirements on one label, as the fewest equivalent ones; undefined when contradictory. */
function foldLabel(requirements: readonly Requirement[]): Requirement[] | undefined {
  const { on, key } = requirements[0]!;
  let present = false;
  let absent = false;
  let allowed: Set<string> | undefined;
  const excluded = new Set<string>();
  let above: bigint | undefined;
  let below: bigint | undefined;
  for (const r of requirements) {
    const values = r.values ?? [];
    switch (r.operator) {
      case "In":
        present = true;
        allowed = new Set(values.filter((v) => !allowed || allowed.has(v)));
        break;
      case "NotIn":
        values.forEach((v) => excluded.add(v));
        break;
      case "Exists":
        present = true;
        break;
      case "DoesNotExist":
        absent = true;
        break;
      case "Gt":
      case "Lt": {
        present = true;
        const limit = BigInt(values[0]!);
        if (r.operator === "Gt") above = above === undefined || limit > above ? limit : above;
        else below = below === undefined || limit < below ? limit : below;
        break;
      }
    }
  }
  const make = (operator: Operator, values?: string[]): Requirement => ({
    on,
    key,
    operator,
    ...(values ? { values } : {}),
    path: pathOf(requirements, operator),
  });
  if (absent) return present ? undefined : [make("DoesNotExist")];
  const ranged = above !== undefined || below !== undefined;
  const inRange = (v: string) =>
    !ranged ||
    (INTEGER.test(v) &&
      (above === undefined || BigInt(v) > above) &&
      (below === undefined || BigInt(v) < below));
  if (allowed) {
    const values = [...allowed].filter((v) => !excluded.has(v) && inRange(v)).sort();
    return values.length ? [make("In", values)] : undefined;
  }
  if (above !== undefined && below !== undefined && below - above <= 1n) return undefined;
  const out: Requirement[] = [];
  if (above !== undefined) out.push(make("Gt", [String(above)]));
  if (below !== undefined) out.push(make("Lt", [String(below)]));
  if (present && !ranged) out.push(make("Exists"));
  // A value outside the range fails the range already; NotIn adds nothing for it.
  const notIn = [...excluded].filter(inRange).sort();
  if (notIn.length) out.push(make("NotIn", notIn));
  return out;
}

/** The requirements on metadata.name (In/NotIn, one name each, as core/v1 allows in matchFields). */
function foldName(requirements: readonly Requirement[]): Requirement[] | undefined {
  const { on, key } = requirements[0]!;
  let allowed: Set<string> | undefined;
  const excluded = new Set<string>();
  for (const r of requirements) {
    const values = r.values ?? [];
    if (r.operator === "In") allowed = new Set(values.filter((v) => !allowed || allowed.has(v)));
    else values.forEach((v) => excluded.add(v));
  }
  const make = (operator: Operator, values: string[]): Requirement => ({
    on,
    key,
    operator,
    values,
    path: pathOf(requirements, operator),
  });
  if (allowed) {
    // One name: matchFields In takes exactly one (the API's schema holds user input to that).
    const names = [...allowed].filter((v) => !excluded.has(v)).sort();
    return names.length ? [make("In", names)] : undefined;
  }
  // NOT one name AND NOT another: one NotIn per name, as matchFields takes one value each.
  return [...excluded].sort().map((n) => make("NotIn", [n]));
}

/** Where the user wrote a requirement with this operator on this key, for messages; "" when derived. */
function pathOf(requirements: readonly Requirement[], operator: Operator): string {
  return requirements.find((r) => r.operator === operator && r.path)?.path ?? "";
}

const OPERATOR_ORDER: readonly Operator[] = ["In", "NotIn", "Exists", "DoesNotExist", "Gt", "Lt"];

function compareRequirements(a: Requirement, b: Requirement): number {
  return (
    a.on.localeCompare(b.on) ||
    (a.key < b.key ? -1 : a.key > b.key ? 1 : 0) ||
    OPERATOR_ORDER.indexOf(a.operator) - OPERATOR_ORDER.indexOf(b.operator) ||
    (a.values ?? []).join("\u0000").localeCompare((b.values ?? []).join("\u0000"))
  );
}

/** Terms deduplicated, without terms that another term already covers (a superset of its requirements), sorted. */
function withoutRedundant(terms: readonly Term[]): Term[] {
  const keyed = new Map(terms.map((t) => [idOf(t), t]));
  const unique = [...keyed.entries()];
  const covers = (general: Term, specific: Term) =>
    general.every((g) => specific.some((s) => sameRequirement(g, s)));
  return unique
    .filter(([id, t]) => !unique.some(([otherId, other]) => otherId !== id && covers(other, t)))
    .sort(([a], [b]) => compareText(a, b))
    .map(([, t]) => t);
}

function idOf(term: Term): string {
  return JSON.stringify(term.map(plainRequirement));
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function plainRequirement({ on, key, operator, values }: Requirement) {
  return [on, key, operator, values ?? []];
}

function sameRequirement(a: Requirement, b: Requirement): boolean {
  return JSON.stringify(plainRequirement(a)) === JSON.stringify(plainRequirement(b));
}
