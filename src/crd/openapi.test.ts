import { z } from "zod";
import { customResourceSchema, structuralSchema, walkSchema, type OpenAPISchema } from "./openapi";

describe("structuralSchema", () => {
  test("a strict object keeps its properties and loses additionalProperties: false", () => {
    const schema = z
      .strictObject({
        name: z.string().min(1).max(63).meta({ description: 'The name. @default "a"', pattern: "^[a-z]+$" }),
        count: z.number().int().min(1).max(100),
        ratio: z.number().min(1),
        on: z.boolean().optional(),
        mode: z.enum(["A", "B"]).optional(),
        tags: z.array(z.string().max(10)).max(4).optional(),
      })
      .meta({
        description: "A thing.",
        "x-kubernetes-validations": [{ rule: "self.count > 0", message: "count" }],
      });
    expect(structuralSchema(schema)).toEqual({
      type: "object",
      description: "A thing.",
      "x-kubernetes-validations": [{ rule: "self.count > 0", message: "count" }],
      required: ["name", "count", "ratio"],
      properties: {
        name: {
          type: "string",
          minLength: 1,
          maxLength: 63,
          description: 'The name. @default "a"',
          pattern: "^[a-z]+$",
        },
        count: { type: "integer", minimum: 1, maximum: 100 },
        ratio: { type: "number", minimum: 1 },
        on: { type: "boolean" },
        mode: { type: "string", enum: ["A", "B"] },
        tags: { type: "array", maxItems: 4, items: { type: "string", maxLength: 10 } },
      },
    });
  });

  test("a record keeps additionalProperties with its value schema", () => {
    expect(structuralSchema(z.record(z.string(), z.string().max(5)))).toEqual({
      type: "object",
      additionalProperties: { type: "string", maxLength: 5 },
    });
  });

  test("a loose object preserves unknown fields", () => {
    expect(structuralSchema(z.looseObject({ a: z.string() }))).toEqual({
      type: "object",
      properties: { a: { type: "string" } },
      required: ["a"],
      "x-kubernetes-preserve-unknown-fields": true,
    });
  });

  test("an unbounded integer is an int64, not a safe integer", () => {
    expect(structuralSchema(z.number().int().min(0))).toEqual({
      type: "integer",
      minimum: 0,
      format: "int64",
    });
    expect(structuralSchema(z.number().int())).toEqual({ type: "integer", format: "int64" });
  });

  test("a date-time keeps its format and drops zod's regular expression", () => {
    expect(structuralSchema(z.iso.datetime({ offset: true }))).toEqual({
      type: "string",
      format: "date-time",
    });
  });

  test("nothing of JSON Schema's own remains", () => {
    const schema = structuralSchema(z.strictObject({ a: z.string() }));
    expect(schema).not.toHaveProperty("$schema");
  });

  test.each([
    [
      "a union",
      z.strictObject({ spec: z.strictObject({ a: z.union([z.string(), z.number()]) }) }),
      'spec.a: "anyOf" cannot be part of a structural schema',
    ],
    [
      "an untyped node",
      z.strictObject({ list: z.array(z.any()) }),
      "list[]: every node of a structural schema needs a type (got undefined)",
    ],
    [
      "an unknown key",
      z.strictObject({ a: z.string().meta({ examples: ["x"] }) }),
      'a: unexpected schema key "examples"',
    ],
    [
      "a reused schema with an id",
      z.strictObject({ a: z.string().meta({ id: "Name" }) }),
      "schemas with an id become $refs, which a structural schema cannot have: Name",
    ],
  ])("%s throws, naming the field", (_what, schema, message) => {
    expect(() => structuralSchema(schema)).toThrow(message);
  });
});

describe("customResourceSchema", () => {
  const resource = z.strictObject({
    apiVersion: z.literal("x.io/v1"),
    kind: z.literal("Thing"),
    metadata: z.looseObject({ name: z.string().max(5) }),
    spec: z.strictObject({ a: z.string() }),
    status: z.strictObject({ b: z.string() }).optional(),
  });

  test("apiVersion and kind are plain strings, metadata an object, and only spec is required", () => {
    const schema = customResourceSchema(resource);
    const properties = schema.properties as Record<string, OpenAPISchema>;
    expect(properties.apiVersion).toMatchObject({ type: "string" });
    expect(properties.apiVersion).not.toHaveProperty("enum");
    expect(properties.kind).toMatchObject({ type: "string" });
    expect(properties.metadata).toEqual({ type: "object" });
    expect(schema.required).toEqual(["spec"]);
  });
});

describe("walkSchema", () => {
  test("visits every node with its path", () => {
    const paths: string[] = [];
    walkSchema(
      structuralSchema(
        z.strictObject({
          a: z.array(z.strictObject({ b: z.string() })),
          m: z.record(z.string(), z.number()),
        }),
      ),
      (_node, path) => paths.push(path),
    );
    expect(paths).toEqual(["", "a", "a[]", "a[].b", "m", "m.*"]);
  });
});
