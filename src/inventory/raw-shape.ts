import { z } from "zod";
import { formatPath } from "../api/errors";

/**
 * Validation of raw tool output at the edge, with messages that say where the output is wrong and what
 * was expected. Tools print numbers either as JSON numbers or as digit strings (older lsblk, lvm
 * always), and booleans as true/false, 0/1 or "0"/"1"; these schemas accept every form they print.
 */

/** Thrown for raw output of the wrong shape; `path` locates the problem inside that output. */
export class RawShapeError extends Error {
  constructor(
    readonly path: string,
    readonly detail: string,
  ) {
    super(path ? `${path}: ${detail}` : detail);
    this.name = "RawShapeError";
  }
}

/**
 * Parses `value` with `schema`; a value of the wrong kind as a whole fails with `expected <expected>`,
 * otherwise the error names the first wrong field, its path prefixed with `prefix`.
 */
export function parseRaw<T>(
  schema: z.ZodType<T>,
  value: unknown,
  expected: string,
  prefix: readonly PropertyKey[] = [],
): T {
  const result = schema.safeParse(value, { reportInput: true });
  if (result.success) return result.data;
  const { path, message } = firstProblem(result.error);
  if (path.length === 0 && prefix.length === 0) throw new RawShapeError("", `expected ${expected}`);
  throw new RawShapeError(formatPath([...prefix, ...path]), message);
}

/** The first issue of a zod error: where, and a readable message. */
export function firstProblem(error: z.ZodError): { path: PropertyKey[]; message: string } {
  const issue = error.issues[0]!;
  return { path: [...issue.path], message: messageOf(issue) };
}

/** The array under `key` of a JSON object, or a RawShapeError `expected <expected>`. */
export function arrayUnder(value: unknown, key: string, expected: string): readonly unknown[] {
  const array =
    typeof value === "object" && value !== null ? (value as Record<string, unknown>)[key] : undefined;
  if (!Array.isArray(array)) throw new RawShapeError("", `expected ${expected}`);
  return array;
}

/** A byte count or other whole number: 2147483648 or "2147483648" (lvm --nosuffix may still append "B"). */
export const wholeNumber = z.union([z.number(), z.string()]).transform((v, ctx) => {
  const n = typeof v === "number" ? v : /^\d+B?$/.test(v.trim()) ? Number(v.trim().replace(/B$/, "")) : NaN;
  if (Number.isSafeInteger(n) && n >= 0) return n;
  ctx.addIssue({ code: "custom", message: `must be a whole number of bytes or units (got ${describe(v)})` });
  return z.NEVER;
});

/** A percentage like "11.04"; "" or null (no such value for this LV) become undefined. */
export const optionalPercent = z
  .union([z.number(), z.string(), z.null()])
  .optional()
  .transform((v, ctx) => {
    if (v === null || v === undefined || v === "") return undefined;
    const n = typeof v === "number" ? v : /^\d+(\.\d+)?$/.test(v.trim()) ? Number(v) : NaN;
    if (Number.isFinite(n)) return n;
    ctx.addIssue({ code: "custom", message: `must be a percentage such as "11.04" (got ${describe(v)})` });
    return z.NEVER;
  });

/** A flag printed as true/false, 1/0 or "1"/"0"; null or absent → undefined. */
export const optionalFlag = z
  .union([z.boolean(), z.literal(0), z.literal(1), z.literal("0"), z.literal("1"), z.null()])
  .optional()
  .transform((v) => (v === null || v === undefined ? undefined : v === true || v === 1 || v === "1"));

/** A text column; null, absent, or only spaces → undefined; otherwise trimmed. */
export const optionalText = z
  .union([z.string(), z.null()])
  .optional()
  .transform((v) => (v === null || v === undefined || v.trim() === "" ? undefined : v.trim()));

function messageOf(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input;
  if ((issue.code === "invalid_type" || issue.code === "invalid_union") && input === undefined)
    return "is required";
  if (issue.code === "invalid_type")
    return `must be ${issue.expected === "object" ? "an object" : `a ${issue.expected}`} (got ${describe(input)})`;
  if (issue.code === "invalid_union") return `has the wrong type (got ${describe(input)})`;
  return issue.message;
}

/** A short description of a bad value for an error message. */
function describe(value: unknown): string {
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object" && value !== null) return "an object";
  const json = JSON.stringify(value);
  return json.length > 60 ? `${json.slice(0, 57)}...` : json;
}

/** The object without its undefined properties, so results compare and print cleanly. */
export function compact<T extends object>(o: T): T {
  const out: Record<string, unknown> = {};
  for (const key in o) if (o[key] !== undefined) out[key] = o[key];
  return out as T;
}
