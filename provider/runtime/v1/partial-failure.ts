import type { NodeOutcome } from "./state";

/**
 * An apply that changed some nodes and failed on others. Thrown from create or update, it reaches
 * the engine as ErrorResourceInitFailed: the dynamic-provider host (@pulumi/pulumi
 * cmd/dynamic-provider, grpcResponseFromError) packs an error's `id`, `properties` and `reasons`
 * into it, and the engine stores the resource with these properties, so the nodes that applied are
 * recorded, and the next `pulumi up` updates it (retrying the nodes that failed).
 */
export class PartialApplyError extends Error {
  constructor(
    message: string,
    readonly id: string,
    /** The resource's outputs: every node's outcome, a failed node's with its `error`. */
    readonly properties: Record<string, unknown>,
    /** One per failed node. */
    readonly reasons: string[],
  ) {
    super(message);
    this.name = "PartialApplyError";
  }
}

/** What an apply of every node did. */
export interface ApplyResult {
  /** Nodes that applied, were converged or are not selected. */
  readonly outcomes: Readonly<Record<string, NodeOutcome>>;
  /** Nodes that failed: why, and what is recorded for them (their outcome before, or "not applied"). */
  readonly failures: Readonly<Record<string, { readonly message: string; readonly outcome: NodeOutcome }>>;
  /** Nodes on which steps ran. */
  readonly changed: readonly string[];
}

/**
 * The outputs of create or update (`props` with `nodes`, sealed), or the error when a node failed:
 * a PartialApplyError when another node changed (the engine must record it), otherwise a plain
 * Error (nothing changed anywhere; the engine keeps what it had). The error's properties are
 * `props` itself plus `nodes`, so they carry the `__provider` the host received with them: the host
 * adds it to a method's result only, never to an error's properties, and the engine needs it to
 * call this provider for the stored resource again.
 */
export function applyOutputs(
  id: string,
  props: Record<string, unknown>,
  result: ApplyResult,
  seal: (props: Record<string, unknown>) => Record<string, unknown>,
): Record<string, unknown> {
  const failed = Object.keys(result.failures).sort();
  if (!failed.length) return seal({ ...props, nodes: sortKeys(result.outcomes) });
  const applied = Object.keys(result.outcomes).sort();
  const message = `applying node set ${id} failed:\n${failed.map((n) => result.failures[n]!.message).join("\n")}${applied.length ? `\napplied: ${applied.join(", ")}` : ""}`;
  if (!result.changed.length) throw new Error(message);
  const recorded = Object.fromEntries(
    failed.map((node) => [
      node,
      { ...result.failures[node]!.outcome, error: result.failures[node]!.message },
    ]),
  );
  throw new PartialApplyError(
    message,
    id,
    seal({ ...props, nodes: sortKeys({ ...result.outcomes, ...recorded }) }),
    failed.map((node) => result.failures[node]!.message),
  );
}

export function sortKeys<T>(record: Readonly<Record<string, T>>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
