import type { z } from "zod";

/** One problem with an input, with the field path a person can find it by. */
export interface ValidationProblem {
  /** e.g. `spec.template.deviceClasses[1].thin.sizePercent` */
  readonly path: string;
  readonly message: string;
}

/** `["a", 1, "b"]` → `a[1].b` */
export function formatPath(path: readonly PropertyKey[]): string {
  let out = "";
  for (const part of path) {
    if (typeof part === "number") out += `[${part}]`;
    else out += out ? `.${String(part)}` : String(part);
  }
  return out;
}

/** Every issue of a zod error as problems with paths and readable messages, in the order zod found them. */
export function problemsFrom(error: z.ZodError, prefix: readonly PropertyKey[] = []): ValidationProblem[] {
  const problems: ValidationProblem[] = [];
  for (const issue of error.issues) {
    const path = [...prefix, ...issue.path];
    if (issue.code === "unrecognized_keys") {
      for (const key of issue.keys)
        problems.push({ path: formatPath([...path, key]), message: "unknown field" });
      continue;
    }
    problems.push({ path: formatPath(path) || "(root)", message: messageOf(issue) });
  }
  return dedupe(problems);
}

/** Formats problems one per line: `path: message`. */
export function formatProblems(problems: readonly ValidationProblem[]): string {
  return problems.map((p) => `${p.path}: ${p.message}`).join("\n");
}

/** Thrown by APIs that validate their input; carries every problem at once. */
export class ValidationError extends Error {
  constructor(
    readonly subject: string,
    readonly problems: readonly ValidationProblem[],
  ) {
    super(`${subject} is invalid:\n${formatProblems(problems.map((p) => ({ ...p, path: `  ${p.path}` })))}`);
    this.name = "ValidationError";
  }
}

function messageOf(issue: z.core.$ZodIssue): string {
  const input = (issue as { input?: unknown }).input;
  switch (issue.code) {
    case "invalid_type":
      if (input === undefined) return "is required";
      if (!issue.message.startsWith("Invalid input")) return issue.message; // the schema's own wording
      return `must be ${article(issue.expected === "int" ? "integer" : issue.expected)} (got ${describeValue(input)})`;
    case "invalid_value":
      if (issue.values.length === 1)
        return `must be ${JSON.stringify(issue.values[0])} (got ${describeValue(input)})`;
      return `must be one of ${issue.values.map((v) => JSON.stringify(v)).join(", ")} (got ${describeValue(input)})`;
    case "too_small":
      if (issue.origin === "array") return `needs at least ${plural(issue.minimum, "item")}`;
      if (issue.origin === "string") return `must be at least ${plural(issue.minimum, "character")}`;
      return issue.message.startsWith("Too small")
        ? `must be at least ${issue.minimum} (got ${describeValue(input)})`
        : issue.message;
    case "too_big":
      if (issue.origin === "array") return `may have at most ${plural(issue.maximum, "item")}`;
      if (issue.origin === "string") return `must be at most ${plural(issue.maximum, "character")}`;
      return issue.message.startsWith("Too big")
        ? `must be at most ${issue.maximum} (got ${describeValue(input)})`
        : issue.message;
    case "invalid_format":
      return issue.message.startsWith("Invalid")
        ? `has an invalid format: ${issue.format} expected (got ${describeValue(input)})`
        : issue.message;
    default:
      return issue.message;
  }
}

function plural(n: number | bigint, noun: string): string {
  return `${n} ${noun}${n === 1 || n === 1n ? "" : "s"}`;
}

function article(type: string): string {
  return /^[aeiou]/.test(type) ? `an ${type}` : `a ${type}`;
}

/** A value as an error message shows it: strings quoted (and shortened), objects and arrays by kind. */
export function describeValue(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string")
    return JSON.stringify(value.length > 80 ? `${value.slice(0, 77)}...` : value);
  return String(value);
}

function dedupe(problems: ValidationProblem[]): ValidationProblem[] {
  const seen = new Set<string>();
  return problems.filter((p) => {
    const key = `${p.path}\0${p.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
