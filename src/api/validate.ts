import type { z } from "zod";
import { problemsFrom, ValidationError, type ValidationProblem } from "./errors";
import { lvmNodeSchema, type LVMNode } from "./lvmnode";
import {
  GROUP_VERSION,
  lvmNodeSetSchema,
  lvmNodeSetSpecSchema,
  type LVMNodeSet,
  type LVMNodeSetSpec,
} from "./lvmnodeset";

export type Kind = "LVMNodeSet" | "LVMNode";

/** The result of checking one object: every problem at once, or the typed object. */
export type Checked<T> = { ok: true; value: T } | { ok: false; problems: ValidationProblem[] };

const schemas = { LVMNodeSet: lvmNodeSetSchema, LVMNode: lvmNodeSchema } as const;

function check<T>(schema: z.ZodType<T>, input: unknown, prefix: PropertyKey[] = []): Checked<T> {
  const r = schema.safeParse(input, { reportInput: true });
  return r.success ? { ok: true, value: r.data } : { ok: false, problems: problemsFrom(r.error, prefix) };
}

export function checkLVMNodeSet(input: unknown): Checked<LVMNodeSet> {
  return check(lvmNodeSetSchema, input);
}

export function checkLVMNode(input: unknown): Checked<LVMNode> {
  return check(lvmNodeSchema, input);
}

/** Checks a node set spec alone (as Pulumi component args carry it); paths start at the spec. */
export function checkLVMNodeSetSpec(input: unknown, prefix: PropertyKey[] = []): Checked<LVMNodeSetSpec> {
  return check(lvmNodeSetSpecSchema, input, prefix);
}

/** Validates or throws a ValidationError listing every problem. */
export function parseLVMNodeSet(input: unknown): LVMNodeSet {
  const r = checkLVMNodeSet(input);
  if (!r.ok) throw new ValidationError(`LVMNodeSet ${nameOf(input)}`, r.problems);
  return r.value;
}

export function parseLVMNode(input: unknown): LVMNode {
  const r = checkLVMNode(input);
  if (!r.ok) throw new ValidationError(`LVMNode ${nameOf(input)}`, r.problems);
  return r.value;
}

/** What an arbitrary manifest is, for tools that read many documents. `undefined`: not ours. */
export function kindOf(input: unknown): Kind | undefined {
  if (typeof input !== "object" || input === null) return undefined;
  const { apiVersion, kind } = input as { apiVersion?: unknown; kind?: unknown };
  if (typeof apiVersion !== "string" || !apiVersion.startsWith("lvm.topolvm.io/")) return undefined;
  return kind === "LVMNodeSet" || kind === "LVMNode" ? kind : undefined;
}

/** Checks any manifest of our group; problems for a wrong apiVersion or unknown kind too. */
export function checkManifest(input: unknown): { kind: string; name: string; problems: ValidationProblem[] } {
  const { apiVersion, kind } = (input ?? {}) as { apiVersion?: unknown; kind?: unknown };
  const name = nameOf(input);
  if (kind !== "LVMNodeSet" && kind !== "LVMNode")
    return {
      kind: String(kind),
      name,
      problems: [
        { path: "kind", message: `must be "LVMNodeSet" or "LVMNode" (got ${JSON.stringify(kind)})` },
      ],
    };
  if (apiVersion !== GROUP_VERSION)
    return {
      kind,
      name,
      problems: [
        { path: "apiVersion", message: `must be "${GROUP_VERSION}" (got ${JSON.stringify(apiVersion)})` },
      ],
    };
  const r = check(schemas[kind] as z.ZodType<unknown>, input);
  return { kind, name, problems: r.ok ? [] : r.problems };
}

/**
 * One problem as `pulumi-lvm validate` prints it after "<file>: " and the admission webhook answers
 * it: "<kind>/<name>: <field path>: <message>". One place, so the two never word a problem differently.
 */
export function problemLine(kind: string, name: string, problem: ValidationProblem): string {
  return `${kind}/${name}: ${problem.path}: ${problem.message}`;
}

function nameOf(input: unknown): string {
  const name = (input as { metadata?: { name?: unknown } } | undefined)?.metadata?.name;
  return typeof name === "string" && name ? name : "(unnamed)";
}
