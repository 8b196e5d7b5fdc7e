import fc from "fast-check";
import { applyMergePatch, mergePatch } from "./merge-patch";

describe("mergePatch", () => {
  test.each([
    [{ a: 1 }, { a: 1 }, undefined],
    [{ a: 1, b: { c: 2, d: 3 } }, { a: 1, b: { c: 5 } }, { b: { c: 5, d: null } }],
    [{ l: [1, 2] }, { l: [2] }, { l: [2] }],
    [{ a: 1 }, { a: 1, n: { x: "y" } }, { n: { x: "y" } }],
    [{ a: { b: 1 } }, { a: "s" }, { a: "s" }],
  ])("from %j to %j is %j", (from, to, want) => {
    expect(mergePatch(from, to)).toEqual(want);
  });

  // JSON without nulls (a null cannot be expressed by a merge patch: it means "remove").
  const json = fc.letrec((tie) => ({
    value: fc.oneof(
      { depthSize: "small" },
      fc.string(),
      fc.integer(),
      fc.boolean(),
      fc.array(tie("value"), { maxLength: 3 }),
      fc.dictionary(fc.constantFrom("a", "b", "c", "d"), tie("value"), { maxKeys: 4 }),
    ),
  })).value;
  const object = fc.dictionary(fc.constantFrom("a", "b", "c", "d"), json, { maxKeys: 4 });

  test("property: applying the patch to `from` gives `to`", () => {
    fc.assert(
      fc.property(object, object, (from, to) => {
        const patch = mergePatch(from, to);
        expect(patch === undefined ? from : applyMergePatch(from, patch)).toEqual(to);
      }),
    );
  });
});
