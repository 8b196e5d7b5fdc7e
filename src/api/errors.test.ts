import { z } from "zod";
import { describeValue, formatPath, formatProblems, problemsFrom, ValidationError } from "./errors";

function problems(schema: z.ZodType, input: unknown, prefix: PropertyKey[] = []) {
  const r = schema.safeParse(input, { reportInput: true });
  return r.success ? [] : problemsFrom(r.error, prefix).map((p) => `${p.path}: ${p.message}`);
}

describe("formatPath", () => {
  test.each([
    [[], ""],
    [["spec"], "spec"],
    [
      ["spec", "template", "deviceClasses", 1, "thin", "sizePercent"],
      "spec.template.deviceClasses[1].thin.sizePercent",
    ],
    [[0, "type"], "[0].type"],
    [["a", 0, 1, "b"], "a[0][1].b"],
  ])("%j → %s", (path, text) => {
    expect(formatPath(path)).toBe(text);
  });
});

describe("problemsFrom", () => {
  test("every unknown field is a problem of its own", () => {
    expect(problems(z.strictObject({ a: z.string() }), { a: "x", b: 1, c: 2 }, ["spec"])).toEqual([
      "spec.b: unknown field",
      "spec.c: unknown field",
    ]);
  });

  test.each([
    [z.strictObject({ n: z.number() }), {}, "n: is required"],
    [z.strictObject({ n: z.number() }), { n: "1" }, 'n: must be a number (got "1")'],
    [z.strictObject({ n: z.number().int() }), { n: 1.5 }, "n: must be an integer (got 1.5)"],
    [z.strictObject({ n: z.object({}) }), { n: [] }, "n: must be an object (got an array)"],
    [z.strictObject({ n: z.string() }), { n: null }, "n: must be a string (got null)"],
    [z.strictObject({ n: z.string({ error: "our own words" }) }), { n: 1 }, "n: our own words"],
    [z.strictObject({ n: z.enum(["A"]) }), { n: "B" }, 'n: must be "A" (got "B")'],
    [z.strictObject({ n: z.enum(["A", "B"]) }), { n: "C" }, 'n: must be one of "A", "B" (got "C")'],
    [z.strictObject({ n: z.array(z.string()).min(2) }), { n: ["a"] }, "n: needs at least 2 items"],
    [z.strictObject({ n: z.array(z.string()).max(1) }), { n: ["a", "b"] }, "n: may have at most 1 item"],
    [z.strictObject({ n: z.string().min(3) }), { n: "ab" }, "n: must be at least 3 characters"],
    [z.strictObject({ n: z.string().max(1) }), { n: "ab" }, "n: must be at most 1 character"],
    [z.strictObject({ n: z.number().min(1) }), { n: 0 }, "n: must be at least 1 (got 0)"],
    [z.strictObject({ n: z.number().max(1) }), { n: 2 }, "n: must be at most 1 (got 2)"],
    [z.strictObject({ n: z.number().max(1, { error: "too many" }) }), { n: 2 }, "n: too many"],
    [
      z.strictObject({ n: z.string().regex(/^a$/) }),
      { n: "b" },
      'n: has an invalid format: regex expected (got "b")',
    ],
    [z.strictObject({ n: z.literal("x") }), { n: "y" }, 'n: must be "x" (got "y")'],
  ])("%#: %s", (schema, input, expected) => {
    expect(problems(schema, input)).toEqual([expected]);
  });

  test("the same problem twice is reported once", () => {
    const twice = z.string().superRefine((_, ctx) => {
      ctx.addIssue({ code: "custom", message: "bad" });
      ctx.addIssue({ code: "custom", message: "bad" });
    });
    expect(problems(twice, "x")).toEqual(["(root): bad"]);
  });
});

describe("describeValue", () => {
  test.each([
    ["x", '"x"'],
    ["y".repeat(100), JSON.stringify(`${"y".repeat(77)}...`)],
    [null, "null"],
    [undefined, "undefined"],
    [[1], "an array"],
    [{ a: 1 }, "an object"],
    [1.5, "1.5"],
    [true, "true"],
  ])("%j → %s", (value, text) => {
    expect(describeValue(value)).toBe(text);
  });
});

describe("ValidationError", () => {
  test("lists every problem under its subject", () => {
    const e = new ValidationError("LVMNodeSet a", [
      { path: "spec.x", message: "one" },
      { path: "spec.y", message: "two" },
    ]);
    expect(e.name).toBe("ValidationError");
    expect(e.message).toBe("LVMNodeSet a is invalid:\n  spec.x: one\n  spec.y: two");
    expect(formatProblems(e.problems)).toBe("spec.x: one\nspec.y: two");
  });
});
