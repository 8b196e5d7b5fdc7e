import { z } from "zod";

/**
 * A zod schema as a Kubernetes *structural* openAPIV3Schema, for a CustomResourceDefinition.
 *
 * zod's JSON Schema output is close; what a CRD needs on top:
 * - every node has a `type`; no `$ref`, `anyOf`, `oneOf`, `allOf` or `not` (a schema that needs them
 *   is not structural, and this throws naming the field rather than emit something the apiserver
 *   would reject or, worse, accept with a different meaning);
 * - no `additionalProperties: false` next to `properties` (structural schemas forbid both; the
 *   apiserver prunes unknown fields instead), while `additionalProperties: {type: string}` of
 *   records stays;
 * - `metadata` at the root is only `{type: object}`: the apiserver validates ObjectMeta itself;
 * - a `format: date-time` string drops zod's regular expression: the format says it.
 * Everything else (description with its `@default`/`@example` tags, which `kubectl explain` shows,
 * enum, pattern, bounds, required, `x-kubernetes-*`) is kept as zod wrote it.
 */
export interface OpenAPISchema {
  readonly type: "object" | "array" | "string" | "integer" | "number" | "boolean";
  readonly [key: string]: unknown;
}

/** Keys a structural schema node may carry (besides `x-kubernetes-*`); anything else throws. */
const KNOWN_KEYS = new Set([
  "type",
  "format",
  "description",
  "properties",
  "required",
  "items",
  "additionalProperties",
  "enum",
  "pattern",
  "minimum",
  "maximum",
  "exclusiveMinimum",
  "exclusiveMaximum",
  "multipleOf",
  "minLength",
  "maxLength",
  "minItems",
  "maxItems",
  "minProperties",
  "maxProperties",
  "nullable",
  "default",
  "title",
]);
const NOT_STRUCTURAL = [
  "$ref",
  "anyOf",
  "oneOf",
  "allOf",
  "not",
  "$defs",
  "definitions",
  "patternProperties",
];
const TYPES = new Set(["object", "array", "string", "integer", "number", "boolean"]);

/** The structural openAPIV3Schema of any zod schema. Throws, naming the field, when it cannot be one. */
export function structuralSchema(schema: z.ZodType): OpenAPISchema {
  const json = z.toJSONSchema(schema, { target: "openapi-3.0", unrepresentable: "any", io: "input" });
  const { $schema: _ignored, ...rest } = json as Record<string, unknown>;
  const shared = (rest.definitions ?? rest.$defs) as Record<string, unknown> | undefined;
  if (shared)
    throw new Error(
      `schemas with an id become $refs, which a structural schema cannot have: ${Object.keys(shared).join(", ")} (drop the id)`,
    );
  return convert(rest, "");
}

/**
 * The openAPIV3Schema of a custom resource: as structuralSchema, and at the root `apiVersion` and
 * `kind` are plain strings (the apiserver routes by them) and `metadata` is `{type: object}`.
 */
export function customResourceSchema(schema: z.ZodType): OpenAPISchema {
  const root = structuralSchema(schema);
  const properties = { ...(root.properties as Record<string, OpenAPISchema>) };
  properties.apiVersion = { type: "string", description: API_VERSION_DESCRIPTION };
  properties.kind = { type: "string", description: KIND_DESCRIPTION };
  properties.metadata = { type: "object" };
  const required = ((root.required as string[] | undefined) ?? []).filter(
    (k) => !["apiVersion", "kind", "metadata"].includes(k),
  );
  const { required: _old, ...rest } = root;
  return { ...rest, properties, ...(required.length ? { required } : {}) };
}

/** Calls `visit` on every node of a converted schema with its field path (`spec.template.volumeGroups[]`). */
export function walkSchema(
  node: OpenAPISchema,
  visit: (node: OpenAPISchema, path: string) => void,
  path = "",
): void {
  visit(node, path);
  const properties = node.properties as Record<string, OpenAPISchema> | undefined;
  for (const [key, child] of Object.entries(properties ?? {})) walkSchema(child, visit, join(path, key));
  if (node.items) walkSchema(node.items as OpenAPISchema, visit, `${path}[]`);
  if (typeof node.additionalProperties === "object")
    walkSchema(node.additionalProperties as OpenAPISchema, visit, `${path}.*`);
}

/* ------------------------------------------------------------------------------- helpers ---- */

const API_VERSION_DESCRIPTION =
  "APIVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources";
const KIND_DESCRIPTION =
  "Kind is a string value representing the REST resource this object represents. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds";

function convert(node: Record<string, unknown>, path: string): OpenAPISchema {
  const where = path || "(root)";
  if (node["x-kubernetes-int-or-string"] === true) return intOrString(node, where);
  for (const key of NOT_STRUCTURAL)
    if (key in node)
      throw new Error(`${where}: "${key}" cannot be part of a structural schema; restructure the zod schema`);
  for (const key of Object.keys(node))
    if (!KNOWN_KEYS.has(key) && !key.startsWith("x-kubernetes-"))
      throw new Error(`${where}: unexpected schema key "${key}" (not valid in a CRD's openAPIV3Schema)`);
  if (typeof node.type !== "string" || !TYPES.has(node.type))
    throw new Error(
      `${where}: every node of a structural schema needs a type (got ${JSON.stringify(node.type)})`,
    );

  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    switch (key) {
      case "properties":
        out.properties = Object.fromEntries(
          Object.entries(value as Record<string, Record<string, unknown>>).map(([name, child]) => [
            name,
            convert(child, join(path, name)),
          ]),
        );
        break;
      case "items":
        out.items = convert(value as Record<string, unknown>, `${path}[]`);
        break;
      case "additionalProperties":
        if (value === false) break; // pruning drops unknown fields; structural schemas forbid false here
        if (value === true || Object.keys(value as object).length === 0) {
          out["x-kubernetes-preserve-unknown-fields"] = true;
          break;
        }
        out.additionalProperties = convert(value as Record<string, unknown>, `${path}.*`);
        break;
      case "pattern":
        if (node.format !== "date-time") out.pattern = value;
        break;
      case "minimum":
      case "maximum":
        // zod bounds every int by the safe-integer range; the apiserver's int64 is the real bound
        if (node.type === "integer" && Math.abs(value as number) === Number.MAX_SAFE_INTEGER) {
          out.format ??= "int64";
          break;
        }
        out[key] = value;
        break;
      default:
        out[key] = value;
    }
  }
  if (out.properties && out.additionalProperties)
    throw new Error(`${where}: a structural schema cannot have both properties and additionalProperties`);
  return out as unknown as OpenAPISchema;
}

/**
 * A union of an integer and a string marked `x-kubernetes-int-or-string` (a count or a percentage):
 * the one node structural schemas allow without a type. Its two forms are checked by the zod
 * schema and a CEL rule on its parent; here it keeps only its description.
 */
function intOrString(node: Record<string, unknown>, where: string): OpenAPISchema {
  const types = ((node.anyOf ?? []) as Array<{ type?: unknown }>).map((o) => o.type).sort();
  if (types.join() !== "integer,string")
    throw new Error(`${where}: x-kubernetes-int-or-string needs a union of an integer and a string`);
  return {
    "x-kubernetes-int-or-string": true,
    ...(typeof node.description === "string" ? { description: node.description } : {}),
  } as unknown as OpenAPISchema;
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}
