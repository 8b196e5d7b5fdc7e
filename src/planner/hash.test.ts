import fc from "fast-check";
import { canonicalJson, canonicalJsonOnce, sha256Canonical, sha256Hex } from "./hash";

test("keys are sorted at every level, undefined left out, arrays kept in order", () => {
  expect(canonicalJson({ b: 1, a: { d: [3, 1], c: undefined, b: "x" } })).toBe(
    '{"a":{"b":"x","d":[3,1]},"b":1}',
  );
  expect(canonicalJson([undefined, null])).toBe("[null,null]");
});

test("the hash depends on content, not key order", () => {
  expect(sha256Canonical({ a: 1, b: 2 })).toBe(sha256Canonical({ b: 2, a: 1 }));
  expect(sha256Canonical({ a: 1 })).not.toBe(sha256Canonical({ a: 2 }));
  expect(sha256Canonical({})).toBe("44136fa355b3678a1146ad16f7e8649e94fb4fc21fe77e8310c060f61caaff8a");
});

test("canonicalJsonOnce gives canonicalJson's text", () => {
  const spec = { b: [1, { d: 2, c: 3 }], a: "x" };
  expect(canonicalJsonOnce(spec)).toBe(canonicalJson(spec));
  expect(canonicalJsonOnce(spec)).toBe('{"a":"x","b":[1,{"c":3,"d":2}]}');
});

test("sha256Hex of parts is the hash of their concatenation", () => {
  expect(sha256Hex("{", "}")).toBe(sha256Canonical({}));
});

/** The definition, spelt out: what canonicalJson must equal. */
function reference(v: unknown): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? "null" : reference(x))).join(",")}]`;
  const r = v as Record<string, unknown>;
  const members = Object.keys(r)
    .sort()
    .filter((k) => r[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${reference(r[k])}`);
  return `{${members.join(",")}}`;
}

test("keys that look like array indexes sort as strings too", () => {
  expect(canonicalJson({ b: { "10": 1, "9": 2, a: 3 }, a: [{ "2": 0, "1": 0 }] })).toBe(
    '{"a":[{"1":0,"2":0}],"b":{"10":1,"9":2,"a":3}}',
  );
});

test("a member named __proto__ is kept, not taken for the prototype", () => {
  const v = JSON.parse('{"b":1,"__proto__":{"x":1},"a":2}');
  expect(canonicalJson(v)).toBe('{"__proto__":{"x":1},"a":2,"b":1}');
  expect(sha256Canonical(v)).not.toBe(sha256Canonical({ a: 2, b: 1 }));
});

test("canonicalJson equals the definition on any JSON value", () => {
  fc.assert(
    fc.property(fc.jsonValue(), (v) => {
      expect(canonicalJson(v)).toBe(reference(v));
    }),
    { numRuns: 500 },
  );
});

/** The definition with JSON.stringify's `space` layout: what canonicalJson(v, indent) must equal. */
function referenceIndented(v: unknown, indent: number, at = ""): string {
  if (v === null || typeof v !== "object") return JSON.stringify(v) ?? "null";
  const inner = at + " ".repeat(indent);
  if (Array.isArray(v)) {
    if (v.length === 0) return "[]";
    const items = v.map((x) => inner + (x === undefined ? "null" : referenceIndented(x, indent, inner)));
    return `[\n${items.join(",\n")}\n${at}]`;
  }
  const r = v as Record<string, unknown>;
  const members = Object.keys(r)
    .sort()
    .filter((k) => r[k] !== undefined)
    .map((k) => `${inner}${JSON.stringify(k)}: ${referenceIndented(r[k], indent, inner)}`);
  return members.length ? `{\n${members.join(",\n")}\n${at}}` : "{}";
}

test("canonicalJson with an indent is the definition laid out as JSON.stringify's space lays it out", () => {
  expect(canonicalJson({ b: [1, { d: 2, c: undefined }], a: {}, "10": [], "9": "x" }, 2)).toBe(
    '{\n  "10": [],\n  "9": "x",\n  "a": {},\n  "b": [\n    1,\n    {\n      "d": 2\n    }\n  ]\n}',
  );
  fc.assert(
    fc.property(fc.jsonValue(), fc.integer({ min: 1, max: 4 }), (v, indent) => {
      expect(canonicalJson(v, indent)).toBe(referenceIndented(v, indent));
    }),
    { numRuns: 500 },
  );
});
