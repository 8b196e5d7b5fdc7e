import { createHash } from "node:crypto";
import fc from "fast-check";
import { CanonicalBytes } from "./canonical-bytes";
import { canonicalJson, sha256Canonical, sha256PlanAndSpec } from "./hash";

/** The writer's bytes as text, or undefined when it leaves the value to canonicalJson. */
function written(value: unknown): string | undefined {
  const w = new CanonicalBytes();
  return w.value(value) ? Buffer.from(w.view()).toString("utf8") : undefined;
}

/** Any string of UTF-16 code units: lone surrogates, control characters, quotes, backslashes. */
const anyString = fc.oneof(
  fc.string({ unit: "binary" }),
  fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((c) => String.fromCharCode(c)) }),
  fc.string({
    unit: fc.constantFrom('"', "\\", "\n", "\u0000", "\u001f", "\u007f", "\u2028", "é", "\ud800"),
  }),
);

const anyValue = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: "small" },
    fc.constantFrom(null, true, false, undefined, 0, -0, NaN, Infinity, -Infinity),
    fc.double(),
    fc.integer({ min: Number.MIN_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER }),
    anyString,
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(
      fc.oneof(anyString, fc.constantFrom("a", "b", "__proto__", "10", "9", "01")),
      tie("value"),
      {
        maxKeys: 5,
      },
    ),
  ),
})).value;

test("the writer's bytes are canonicalJson's text as UTF-8, or it leaves the value to canonicalJson", () => {
  fc.assert(
    fc.property(anyValue, (v) => {
      const text = written(v);
      if (text !== undefined) expect(text).toBe(canonicalJson(v));
      // Whichever path it takes, the hash is that of canonicalJson's text.
      expect(sha256Canonical(v)).toBe(createHash("sha256").update(canonicalJson(v)).digest("hex"));
    }),
    { numRuns: 2000 },
  );
});

test("plain JSON values are written, never left to canonicalJson, unless a key looks like an index", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      const indexKey = JSON.stringify(v).match(/"(0|[1-9]\d*)":/);
      if (!indexKey) expect(written(v)).toBe(canonicalJson(v));
    }),
    { numRuns: 1000 },
  );
});

test("strings escape as JSON.stringify escapes them; numbers print as it prints them", () => {
  for (const s of ['a"b\\c', "\b\f\n\r\t\u0000\u001f\u007f", "\ud800x\udc00", "\ud83d\ude00", "\u2028é€"])
    expect(written(s)).toBe(JSON.stringify(s));
  for (const n of [0, -0, 7, -42, 2 ** 53 - 1, -(2 ** 53 - 1), 2 ** 53, 1e21, 1.5, -1e-7, NaN, -Infinity])
    expect(written(n)).toBe(JSON.stringify(n));
});

test("members JSON.stringify leaves out are left out; in arrays they are null", () => {
  const v = { b: undefined, a: () => 1, c: Symbol("s"), d: [undefined, () => 1, Symbol("s")] };
  expect(written(v)).toBe('{"d":[null,null,null]}');
  expect(written({ z: 1, a: { y: 2, b: undefined } })).toBe('{"a":{"y":2},"z":1}');
});

test("what only canonicalJson's path writes: index-like keys, class instances, toJSON, undefined, cycles", () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  for (const v of [{ "1": 0, a: 1 }, { b: { a: 1, "0": 2 } }, new Date(0), { toJSON: () => 1 }, undefined])
    expect(written(v)).toBeUndefined();
  expect(written(cyclic)).toBeUndefined();
  // As before: canonicalJson throws on a cycle (its walk runs out of stack).
  expect(() => canonicalJson(cyclic)).toThrow(RangeError);
  expect(() => sha256Canonical(cyclic)).toThrow(RangeError);
  expect(sha256Canonical({ when: new Date(0), "1": 0 })).toBe(
    createHash("sha256").update('{"1":0,"when":"1970-01-01T00:00:00.000Z"}').digest("hex"),
  );
});

test("the buffer grows for large values, and a writer is reused from a clean start", () => {
  const big = { text: "x".repeat(200_000), list: Array.from({ length: 20_000 }, (_, i) => i) };
  expect(written(big)).toBe(canonicalJson(big));
  const w = new CanonicalBytes();
  w.value(big);
  w.reset();
  w.value({ a: 1 });
  expect(Buffer.from(w.view()).toString()).toBe('{"a":1}');
});

test("a plan's hash is sha256 of {plan, spec}'s canonical JSON, the spec's bytes written once", () => {
  fc.assert(
    fc.property(
      fc.jsonValue(),
      fc.option(fc.dictionary(fc.string(), fc.jsonValue()), { nil: undefined }),
      (plan, spec) => {
        const wrapped = { plan: { value: plan }, spec };
        const text = `{"plan":${canonicalJson(wrapped.plan)},"spec":${spec ? canonicalJson(spec) : "null"}}`;
        const expected = createHash("sha256").update(text).digest("hex");
        expect(sha256PlanAndSpec(wrapped.plan, spec)).toBe(expected);
        expect(sha256PlanAndSpec(wrapped.plan, spec)).toBe(expected); // the spec's kept bytes
      },
    ),
    { numRuns: 500 },
  );
});
