import fc from "fast-check";
import type { NodeSelector } from "../../api/lvmnodeset";
import { matchesNodeSelector } from "../../planner/node-selector";
import { nodeCells } from "./node-cells";

/**
 * The split of LVMS's per-class node selectors into node sets, on random selectors and nodes: every
 * node is in at most one cell, and that cell holds exactly the classes whose selectors pick the node
 * (none when none does), as LVMS gave them. No Gt/Lt here: negating them is refused (convert.test.ts).
 */
const requirement = fc.oneof(
  fc.record({
    key: fc.constantFrom("zone", "disk"),
    operator: fc.constantFrom("In" as const, "NotIn" as const),
    values: fc.uniqueArray(fc.constantFrom("a", "b", "c"), { minLength: 1, maxLength: 2 }),
  }),
  fc.record({
    key: fc.constantFrom("zone", "disk"),
    operator: fc.constantFrom("Exists" as const, "DoesNotExist" as const),
  }),
);
const field = fc.record({
  key: fc.constant("metadata.name"),
  operator: fc.constantFrom("In" as const, "NotIn" as const),
  values: fc.constantFrom("n1", "n2").map((v) => [v]),
});
const selector: fc.Arbitrary<NodeSelector | undefined> = fc.option(
  fc
    .array(
      fc
        .record({
          matchExpressions: fc.array(requirement, { maxLength: 2 }),
          matchFields: fc.array(field, { maxLength: 1 }),
        })
        .filter((t) => t.matchExpressions.length + t.matchFields.length > 0)
        .map((t) => ({
          ...(t.matchExpressions.length ? { matchExpressions: t.matchExpressions } : {}),
          ...(t.matchFields.length ? { matchFields: t.matchFields } : {}),
        })),
      { minLength: 1, maxLength: 2 },
    )
    .map((nodeSelectorTerms) => ({ nodeSelectorTerms })),
  { nil: undefined, freq: 4 },
);
const node = fc.record({
  name: fc.constantFrom("n1", "n2", "n3"),
  labels: fc
    .array(fc.tuple(fc.constantFrom("zone", "disk"), fc.constantFrom("a", "b", "c")), { maxLength: 2 })
    .map((pairs) => Object.fromEntries(pairs)),
});

test("every node is in at most one cell, holding exactly the classes LVMS gave it", () => {
  fc.assert(
    fc.property(
      fc.array(selector, { minLength: 1, maxLength: 4 }),
      fc.array(node, { maxLength: 6 }),
      (selectors, nodes) => {
        const r = nodeCells(selectors);
        if (!("cells" in r)) throw new Error(JSON.stringify(r.problems));
        for (const n of nodes) {
          const lvms = selectors.flatMap((s, i) => (matchesNodeSelector(s, n) ? [i] : []));
          const cells = r.cells.filter((c) => matchesNodeSelector(c.nodeSelector, n));
          expect(cells.map((c) => c.classes)).toEqual(lvms.length ? [lvms] : []);
        }
      },
    ),
    { numRuns: 150 },
  );
});
