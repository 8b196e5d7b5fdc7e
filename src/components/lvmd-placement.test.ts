import fc from "fast-check";
import type { NodeSelector } from "../api";
import { matchesNodeSelector, type NodeFacts } from "../planner/node-selector";
import {
  exclusivePlacements,
  MAX_AFFINITY_TERMS,
  unionOf,
  type Placement,
  type PlacementNodeSet,
} from "./lvmd-placement";

type Requirement = { key: string; operator: string; values?: string[] };
const term = (...matchExpressions: Requirement[]) => ({ matchExpressions });
const selector = (...terms: object[]) => ({ nodeSelectorTerms: terms }) as NodeSelector;
const zone = (...values: string[]) => ({ key: "zone", operator: "In", values });

function matches(p: Placement, node: NodeFacts): boolean {
  return p.kind === "every-node" || (p.kind === "nodes" && matchesNodeSelector(p.nodeSelector, node));
}

describe("exclusivePlacements", () => {
  test("disjoint zones: each set keeps its own selector, nothing overlaps", () => {
    const r = exclusivePlacements([
      { name: "north", nodeSelector: selector(term(zone("north"))) },
      { name: "south", nodeSelector: selector(term(zone("south"))) },
    ]);
    expect(r).toEqual({
      placements: [
        { kind: "nodes", nodeSelector: selector(term(zone("north"))) },
        { kind: "nodes", nodeSelector: selector(term(zone("south"))) },
      ],
      overlaps: [],
      problems: [],
    });
  });

  test.each<[string, PlacementNodeSet[], Placement[], Array<[number, number]>]>([
    ["one set without a selector: every node", [{ name: "all" }], [{ kind: "every-node" }], []],
    [
      "a role and a zone that may overlap: each excludes the other",
      [
        { name: "storage", nodeSelector: selector(term({ key: "role", operator: "Exists" })) },
        { name: "edge", nodeSelector: selector(term(zone("edge"))) },
      ],
      [
        {
          kind: "nodes",
          nodeSelector: selector(
            term({ key: "role", operator: "Exists" }, { key: "zone", operator: "NotIn", values: ["edge"] }),
          ),
        },
        {
          kind: "nodes",
          nodeSelector: selector(term({ key: "role", operator: "DoesNotExist" }, zone("edge"))),
        },
      ],
      [[0, 1]],
    ],
    [
      "identical selectors: no node belongs to either",
      [
        { name: "a", nodeSelector: selector(term(zone("x"))) },
        { name: "b", nodeSelector: selector(term(zone("x"))) },
      ],
      [{ kind: "no-node" }, { kind: "no-node" }],
      [[0, 1]],
    ],
    [
      "a catch-all beside a zone: the catch-all gets every node but the zone's, the zone keeps nothing it shares",
      [{ name: "rest" }, { name: "edge", nodeSelector: selector(term(zone("edge"))) }],
      [
        { kind: "nodes", nodeSelector: selector(term({ key: "zone", operator: "NotIn", values: ["edge"] })) },
        { kind: "no-node" },
      ],
      [[0, 1]],
    ],
    [
      "In on one value of a wider In: the narrower set is carved out",
      [
        { name: "wide", nodeSelector: selector(term(zone("a", "b", "c"))) },
        { name: "narrow", nodeSelector: selector(term(zone("b"))) },
      ],
      [{ kind: "nodes", nodeSelector: selector(term(zone("a", "c"))) }, { kind: "no-node" }],
      [[0, 1]],
    ],
    [
      "node names (matchFields): one NotIn per name",
      [
        { name: "rest", nodeSelector: selector(term(zone("a"))) },
        {
          name: "n1",
          nodeSelector: selector({ matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }] }),
        },
        {
          name: "n2",
          nodeSelector: selector({ matchFields: [{ key: "metadata.name", operator: "In", values: ["n2"] }] }),
        },
      ],
      [
        {
          kind: "nodes",
          nodeSelector: selector({
            matchExpressions: [zone("a")],
            matchFields: [
              { key: "metadata.name", operator: "NotIn", values: ["n1"] },
              { key: "metadata.name", operator: "NotIn", values: ["n2"] },
            ],
          }),
        },
        {
          kind: "nodes",
          nodeSelector: selector({
            matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }],
            matchFields: [{ key: "metadata.name", operator: "In", values: ["n1"] }],
          }),
        },
        {
          kind: "nodes",
          nodeSelector: selector({
            matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }],
            matchFields: [{ key: "metadata.name", operator: "In", values: ["n2"] }],
          }),
        },
      ],
      [
        [0, 1],
        [0, 2],
      ],
    ],
    [
      "Gt and Lt ranges that leave no integer between them do not overlap",
      [
        { name: "big", nodeSelector: selector(term({ key: "disks", operator: "Gt", values: ["4"] })) },
        { name: "small", nodeSelector: selector(term({ key: "disks", operator: "Lt", values: ["5"] })) },
      ],
      [
        { kind: "nodes", nodeSelector: selector(term({ key: "disks", operator: "Gt", values: ["4"] })) },
        { kind: "nodes", nodeSelector: selector(term({ key: "disks", operator: "Lt", values: ["5"] })) },
      ],
      [],
    ],
  ])("%s", (_, sets, placements, overlaps) => {
    expect(exclusivePlacements(sets)).toEqual({ placements, overlaps, problems: [] });
  });

  test("a Gt another set may share nodes with cannot be negated exactly: a problem naming its path", () => {
    const r = exclusivePlacements(
      [
        { name: "edge", nodeSelector: selector(term(zone("edge"))) },
        {
          name: "big",
          nodeSelector: selector(term(zone("a")), term({ key: "disks", operator: "Gt", values: ["4"] })),
        },
      ],
      "args.topolvm.nodeSets",
    );
    expect(r.problems).toEqual([
      {
        path: "args.topolvm.nodeSets[1].nodeSelector.nodeSelectorTerms[1].matchExpressions[0].operator",
        message:
          'Gt cannot be negated exactly in a node affinity (a node whose "disks" label is not an integer matches neither Gt nor Lt), and the lvmd of node set "edge" must exclude the nodes node set "big" selects: make the two selectors exclude each other (e.g. In and NotIn on one label)',
      },
    ]);
    // The other direction needs no Gt negated: "big" excludes "edge" with zone NotIn [edge].
    expect(r.placements[1]).toEqual({
      kind: "nodes",
      nodeSelector: selector(
        term(
          { key: "disks", operator: "Gt", values: ["4"] },
          { key: "zone", operator: "NotIn", values: ["edge"] },
        ),
        term(zone("a")),
      ),
    });
  });

  test("more terms than a node affinity should hold: a problem on the node set's selector", () => {
    // Each other set is one term of 3 requirements on distinct keys: NOT it is 3 terms; 5 such sets
    // multiply to 3^5 = 243 terms for the first.
    const sets: PlacementNodeSet[] = [
      { name: "all" },
      ...[1, 2, 3, 4, 5].map((n) => ({
        name: `s${n}`,
        nodeSelector: selector(
          term(
            { key: `a${n}`, operator: "Exists" },
            { key: `b${n}`, operator: "Exists" },
            { key: `c${n}`, operator: "Exists" },
          ),
        ),
      })),
    ];
    const r = exclusivePlacements(sets, "nodeSets");
    expect(r.problems).toEqual([
      {
        path: "nodeSets[0].nodeSelector",
        message: `the nodes only node set "all" selects need 243 or more node affinity terms (at most ${MAX_AFFINITY_TERMS}): make the node sets' selectors exclude each other on one label`,
      },
    ]);
    expect(r.placements[0]).toEqual({ kind: "no-node" });
  });
});

describe("unionOf", () => {
  test.each<[string, Placement[], Placement]>([
    ["nothing", [], { kind: "no-node" }],
    ["any every-node", [{ kind: "no-node" }, { kind: "every-node" }], { kind: "every-node" }],
    [
      "the terms of all, without repeats",
      [
        { kind: "nodes", nodeSelector: selector(term(zone("b"))) },
        { kind: "no-node" },
        { kind: "nodes", nodeSelector: selector(term(zone("a")), term(zone("b"))) },
      ],
      { kind: "nodes", nodeSelector: selector(term(zone("a")), term(zone("b"))) },
    ],
  ])("%s", (_, placements, union) => {
    expect(unionOf(placements)).toEqual(union);
  });
});

/* ------------------------------------------------------------------------------ properties ---- */

const KEYS = ["zone", "role", "disks"];
const VALUES = ["a", "b", "1", "5"];
const NAMES = ["n1", "n2", "n3"];

const valuesArb = fc.uniqueArray(fc.constantFrom(...VALUES), { minLength: 1, maxLength: 2 });
const expressionArb = (withRanges: boolean) =>
  fc.oneof(
    fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom("In", "NotIn"), values: valuesArb }),
    fc.record({ key: fc.constantFrom(...KEYS), operator: fc.constantFrom("Exists", "DoesNotExist") }),
    ...(withRanges
      ? [
          fc.record({
            key: fc.constant("disks"),
            operator: fc.constantFrom("Gt", "Lt"),
            values: fc.tuple(fc.constantFrom("0", "1", "3", "5")).map((v) => [...v]),
          }),
        ]
      : []),
  );
const fieldArb = fc.record({
  key: fc.constant("metadata.name"),
  operator: fc.constantFrom("In", "NotIn"),
  values: fc.tuple(fc.constantFrom(...NAMES)).map((v) => [...v]),
});
const termArb = (withRanges: boolean) =>
  fc
    .record({
      matchExpressions: fc.array(expressionArb(withRanges), { maxLength: 2 }),
      matchFields: fc.array(fieldArb, { maxLength: 1 }),
    })
    .filter((t) => t.matchExpressions.length + t.matchFields.length > 0)
    .map((t) => ({
      ...(t.matchExpressions.length ? { matchExpressions: t.matchExpressions } : {}),
      ...(t.matchFields.length ? { matchFields: t.matchFields } : {}),
    }));
const setsArb = (withRanges: boolean) =>
  fc.array(
    fc.option(
      fc.array(termArb(withRanges), { minLength: 1, maxLength: 2 }).map((terms) => selector(...terms)),
      { nil: undefined, freq: 5 },
    ),
    { minLength: 1, maxLength: 3 },
  );
const nodeArb = fc.record({
  name: fc.constantFrom(...NAMES),
  labels: fc
    .array(fc.tuple(fc.constantFrom(...KEYS), fc.constantFrom(...VALUES, "x")), { maxLength: 3 })
    .map((pairs) => Object.fromEntries(pairs)),
});

function named(selectors: Array<NodeSelector | undefined>): PlacementNodeSet[] {
  return selectors.map((nodeSelector, i) => ({
    name: `set-${i}`,
    ...(nodeSelector ? { nodeSelector } : {}),
  }));
}

/** Node set i's lvmd is on a node exactly when set i, and no other set, selects it (the planner's rule). */
function agreesWithThePlanner(sets: PlacementNodeSet[], placements: readonly Placement[], node: NodeFacts) {
  const selecting = sets.flatMap((s, i) => (matchesNodeSelector(s.nodeSelector, node) ? [i] : []));
  const placed = placements.flatMap((p, i) => (matches(p, node) ? [i] : []));
  expect(placed).toEqual(selecting.length === 1 ? selecting : []);
}

describe("properties", () => {
  test("every node gets the lvmd of the one set that selects it, and none when several or none do", () => {
    fc.assert(
      fc.property(setsArb(false), fc.array(nodeArb, { minLength: 1, maxLength: 6 }), (selectors, nodes) => {
        const sets = named(selectors);
        const r = exclusivePlacements(sets);
        expect(r.problems).toEqual([]);
        for (const node of nodes) agreesWithThePlanner(sets, r.placements, node);
      }),
      { numRuns: 500 },
    );
  });

  test("with Gt and Lt too: exact whenever no problem is reported", () => {
    fc.assert(
      fc.property(setsArb(true), fc.array(nodeArb, { minLength: 1, maxLength: 6 }), (selectors, nodes) => {
        const sets = named(selectors);
        const r = exclusivePlacements(sets);
        fc.pre(r.problems.length === 0);
        for (const node of nodes) agreesWithThePlanner(sets, r.placements, node);
      }),
      { numRuns: 500 },
    );
  });

  test("the union holds exactly the nodes some placement holds", () => {
    fc.assert(
      fc.property(setsArb(false), fc.array(nodeArb, { minLength: 1, maxLength: 6 }), (selectors, nodes) => {
        const { placements } = exclusivePlacements(named(selectors));
        const union = unionOf(placements);
        for (const node of nodes) expect(matches(union, node)).toBe(placements.some((p) => matches(p, node)));
      }),
      { numRuns: 300 },
    );
  });

  test("the same sets in another order, with their terms in another order, give the same placements", () => {
    fc.assert(
      fc.property(
        setsArb(true).chain((selectors) =>
          fc.tuple(
            fc.constant(selectors),
            fc.shuffledSubarray(
              selectors.map((_, i) => i),
              { minLength: selectors.length },
            ),
          ),
        ),
        ([selectors, order]) => {
          const sets = named(selectors);
          const shuffled = order.map((i) => {
            const s = sets[i]!;
            return s.nodeSelector
              ? { ...s, nodeSelector: selector(...[...s.nodeSelector.nodeSelectorTerms].reverse()) }
              : s;
          });
          const byName = (r: ReturnType<typeof exclusivePlacements>, from: PlacementNodeSet[]) =>
            Object.fromEntries(from.map((s, i) => [s.name, r.placements[i]]));
          const a = exclusivePlacements(sets);
          const b = exclusivePlacements(shuffled);
          expect(byName(b, shuffled)).toEqual(byName(a, sets));
        },
      ),
      { numRuns: 300 },
    );
  });
});
