import type { LvmsNodeSelector, LvmsRequirement } from "./schema";

/**
 * LVMS gives each device class its own node selector, and a node gets every class whose selector
 * picks it. An LVMNodeSet holds a node alone (the admission webhook refuses two sets on one node), so
 * classes whose selectors differ are split into disjoint cells: one per combination of classes, whose
 * selector picks exactly the nodes that LVMS gave that combination. A selector is handled as a
 * disjunction of terms (core/v1 semantics), so "A and not B" is built with the usual algebra and
 * terms that can never hold (`zone In [a]` and `zone In [b]`) are pruned.
 */

type Bucket = "matchExpressions" | "matchFields";
interface Req {
  readonly bucket: Bucket;
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
}
/** Requirements ANDed; an empty term holds for every node. */
type Term = readonly Req[];
/** Terms ORed; [] holds for no node, [[]] for every node. */
type Dnf = readonly Term[];

export interface Cell {
  /** Indexes of the classes (into the list given) every node of the cell gets. */
  readonly classes: readonly number[];
  /** undefined: every node. */
  readonly nodeSelector: LvmsNodeSelector | undefined;
}

export interface CellsResult {
  readonly cells: Cell[];
  /** Requirements whose negation cannot be written exactly (Gt/Lt on a label that is no integer). */
  readonly gaps: string[];
}

/** Most distinct selectors split into cells (2^n - 1 combinations). */
export const MAX_DISTINCT_SELECTORS = 6;

/**
 * The cells for `selectors` (one per class; undefined: every node). Classes with the same selector
 * always share a cell. Throws when there are more than MAX_DISTINCT_SELECTORS distinct selectors.
 */
export function nodeCells(selectors: ReadonlyArray<LvmsNodeSelector | undefined>): CellsResult {
  const distinct: Array<{ dnf: Dnf; classes: number[] }> = [];
  const byKey = new Map<string, number>();
  selectors.forEach((s, i) => {
    const dnf = toDnf(s);
    const key = JSON.stringify(canonical(dnf));
    const at = byKey.get(key);
    if (at !== undefined) distinct[at]!.classes.push(i);
    else {
      byKey.set(key, distinct.length);
      distinct.push({ dnf, classes: [i] });
    }
  });
  if (distinct.length > MAX_DISTINCT_SELECTORS)
    throw new Error(
      `the device classes have ${distinct.length} different node selectors; at most ${MAX_DISTINCT_SELECTORS} can be split into node sets automatically`,
    );
  const gaps = new Set<string>();
  const cells: Cell[] = [];
  // Subsets in order of size, then of first class: one distinct selector gives one cell.
  const subsets = [...Array(2 ** distinct.length).keys()]
    .slice(1)
    .sort((a, b) => popcount(b) - popcount(a) || a - b);
  for (const mask of subsets) {
    let dnf: Dnf = [[]];
    distinct.forEach((d, i) => {
      dnf = and(dnf, mask & (1 << i) ? d.dnf : not(d.dnf, gaps));
    });
    dnf = simplify(dnf);
    if (dnf.length === 0) continue;
    const classes = distinct.flatMap((d, i) => (mask & (1 << i) ? d.classes : [])).sort((a, b) => a - b);
    cells.push({ classes, nodeSelector: fromDnf(dnf) });
  }
  cells.sort((a, b) => a.classes[0]! - b.classes[0]! || b.classes.length - a.classes.length);
  return { cells, gaps: [...gaps] };
}

function popcount(n: number): number {
  let c = 0;
  for (; n; n &= n - 1) c++;
  return c;
}

function toDnf(s: LvmsNodeSelector | undefined): Dnf {
  if (!s) return [[]];
  return s.nodeSelectorTerms.map((t) => [
    ...(t.matchExpressions ?? []).map((r) => req("matchExpressions", r)),
    ...(t.matchFields ?? []).map((r) => req("matchFields", r)),
  ]);
}

function req(bucket: Bucket, r: LvmsRequirement): Req {
  return { bucket, key: r.key, operator: r.operator, ...(r.values ? { values: r.values } : {}) };
}

function fromDnf(dnf: Dnf): LvmsNodeSelector | undefined {
  if (dnf.some((t) => t.length === 0)) return undefined;
  return {
    nodeSelectorTerms: dnf.map((t) => {
      const part = (bucket: Bucket) =>
        t
          .filter((r) => r.bucket === bucket)
          .map((r) => ({ key: r.key, operator: r.operator, ...(r.values ? { values: [...r.values] } : {}) }));
      const expressions = part("matchExpressions");
      const fields = part("matchFields");
      return {
        ...(expressions.length ? { matchExpressions: expressions } : {}),
        ...(fields.length ? { matchFields: fields } : {}),
      };
    }),
  };
}

function and(a: Dnf, b: Dnf): Dnf {
  return a.flatMap((x) => b.map((y) => [...x, ...y]));
}

/** not (T1 or T2 ...) = (not T1) and (not T2) ...; not (r1 and r2 ...) = (not r1) or (not r2) ... */
function not(dnf: Dnf, gaps: Set<string>): Dnf {
  let out: Dnf = [[]];
  for (const term of dnf)
    out = simplify(
      and(
        out,
        term.flatMap((r) => negate(r, gaps).map((n) => [n])),
      ),
    );
  return out;
}

function negate(r: Req, gaps: Set<string>): Req[] {
  const flip = (operator: string, values?: readonly string[]): Req => ({
    bucket: r.bucket,
    key: r.key,
    operator,
    ...(values ? { values } : {}),
  });
  switch (r.operator) {
    case "In":
      return [flip("NotIn", r.values)];
    case "NotIn":
      return [flip("In", r.values)];
    case "Exists":
      return [flip("DoesNotExist")];
    case "DoesNotExist":
      return [flip("Exists")];
    case "Gt":
    case "Lt": {
      const n = Number(r.values?.[0]);
      gaps.add(`${r.key} ${r.operator} ${r.values?.[0] ?? ""}`);
      const other = r.operator === "Gt" ? flip("Lt", [String(n + 1)]) : flip("Gt", [String(n - 1)]);
      return [other, flip("DoesNotExist")];
    }
    default:
      throw new Error(`node selector operator "${r.operator}" is not one of core/v1's`);
  }
}

/** Each term simplified (or dropped when it can never hold), duplicates and subsumed terms dropped. */
function simplify(dnf: Dnf): Dnf {
  const terms = dnf.map(simplifyTerm).filter((t): t is Req[] => t !== undefined);
  const keys = terms.map((t) => new Set(t.map((r) => JSON.stringify(r))));
  return terms.filter((_, i) =>
    keys.every((other, j) => {
      if (i === j) return true;
      const subset = [...other].every((k) => keys[i]!.has(k));
      // another term with fewer (or the same, earlier) requirements already covers this one
      return !(subset && (other.size < keys[i]!.size || j < i));
    }),
  );
}

/** One key's In/NotIn/Exists/DoesNotExist folded together; undefined when the term cannot hold. */
function simplifyTerm(term: Term): Req[] | undefined {
  const groups = new Map<string, Req[]>();
  for (const r of term) {
    const k = `${r.bucket}\u0000${r.key}`;
    groups.set(k, [...(groups.get(k) ?? []), r]);
  }
  const out: Req[] = [];
  for (const reqs of groups.values()) {
    const { bucket, key } = reqs[0]!;
    let allowed: Set<string> | undefined;
    const excluded = new Set<string>();
    let exists = false;
    let absent = false;
    const rest: Req[] = [];
    for (const r of reqs) {
      if (r.operator === "In") {
        const values = new Set(r.values ?? []);
        allowed = allowed ? new Set([...allowed].filter((v) => values.has(v))) : values;
      } else if (r.operator === "NotIn") for (const v of r.values ?? []) excluded.add(v);
      else if (r.operator === "Exists") exists = true;
      else if (r.operator === "DoesNotExist") absent = true;
      else if (!rest.some((x) => JSON.stringify(x) === JSON.stringify(r))) rest.push(r);
    }
    if (allowed) {
      const values = [...allowed].filter((v) => !excluded.has(v));
      if (absent || values.length === 0) return undefined;
      out.push({ bucket, key, operator: "In", values }, ...rest);
    } else if (absent) {
      if (exists || rest.length) return undefined; // Gt/Lt need the label
      out.push({ bucket, key, operator: "DoesNotExist" });
    } else {
      if (exists) out.push({ bucket, key, operator: "Exists" });
      // matchFields takes one node name per requirement
      if (excluded.size && bucket === "matchFields")
        for (const v of excluded) out.push({ bucket, key, operator: "NotIn", values: [v] });
      else if (excluded.size) out.push({ bucket, key, operator: "NotIn", values: [...excluded] });
      out.push(...rest);
    }
  }
  return out;
}

function canonical(dnf: Dnf): string[][] {
  return dnf
    .map((t) =>
      t.map((r) => JSON.stringify([r.bucket, r.key, r.operator, [...(r.values ?? [])].sort()])).sort(),
    )
    .sort((a, b) => (a.join() < b.join() ? -1 : 1));
}
