import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import {
  dnsLabelProblem,
  dnsSubdomainProblem,
  labelKeyProblem,
  labelValueProblem,
  problemsFrom,
  ValidationError,
  type ValidationProblem,
} from "../api";

/**
 * Component args are an edge (contributing.md, style 6): every component checks its args with zod
 * before it registers anything and throws one ValidationError listing every problem, each with its
 * path from `args`, e.g. `args.template.deviceClasses[1].thin.sizePercent: must be between 1 and 100 (got 120)`.
 */

/** Problems of `input` against `schema`, with paths starting at `args`. */
export function argsProblems(schema: z.ZodType, input: unknown): ValidationProblem[] {
  const r = schema.safeParse(input, { reportInput: true });
  return r.success ? [] : problemsFrom(r.error, ["args"]);
}

/** Throws a ValidationError for component `type` named `name` when there are problems. */
export function throwIfInvalid(type: string, name: string, problems: readonly ValidationProblem[]): void {
  if (problems.length > 0) throw new ValidationError(`${type} "${name}"`, problems);
}

/* --------------------------------------------------------------------- shared schemas ---- */

function refined(check: (value: string) => string | undefined) {
  return z.string().superRefine((value, ctx) => {
    const problem = check(value);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });
}

/** A namespace name (DNS-1123 label). */
export const namespaceName = refined(dnsLabelProblem);

/** A cluster object name (DNS-1123 subdomain). */
export const objectName = refined(dnsSubdomainProblem);

/** Kubernetes labels: problems name the offending key. */
export const labels = z.record(z.string(), z.string()).superRefine((map, ctx) => {
  for (const [key, value] of Object.entries(map)) {
    const problem = labelKeyProblem(key) ?? labelValueProblem(value);
    if (problem) ctx.addIssue({ code: "custom", path: [key], message: problem });
  }
});

/** A plain object (not null, not an array). */
export function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A non-empty string, or an Output or Promise of one (checked when it resolves, where it is used). */
export const nonEmptyStringInput = z.custom<pulumi.Input<string>>(
  (value) =>
    pulumi.Output.isInstance(value) ||
    value instanceof Promise ||
    (typeof value === "string" && value.length > 0),
  { error: "must be a non-empty string or an Output of one" },
);
