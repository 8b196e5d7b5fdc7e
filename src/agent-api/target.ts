/**
 * Which node, and which LVMNode, a call to an agent is for: sent by every client (the operator, the
 * provider) in one header, checked by the agent before anything else (src/agent/server.ts). An agent
 * refuses a call meant for another node, or for an LVMNode outside the namespace it serves, so a URL
 * or pod IP pointing at the wrong agent, or a token valid for many nodes, cannot act on the wrong node.
 *
 * Shared by the agent and its clients (no server internals): the header and its one format.
 */

/** `x-pulumi-lvm-target: <node>` or `x-pulumi-lvm-target: <namespace>/<lvmnode>` (an LVMNode is named after its node). */
export const TARGET_HEADER = "x-pulumi-lvm-target";

export interface CallTarget {
  /** The node the caller means. */
  readonly node: string;
  /** The LVMNode's namespace, when the call is made for an LVMNode (the operator). */
  readonly namespace?: string;
}

/** The header value for `target`. */
export function formatTarget(target: CallTarget): string {
  return target.namespace ? `${target.namespace}/${target.node}` : target.node;
}

/** "node n1" or "LVMNode storage/n1", for messages. */
export function describeTarget(target: CallTarget): string {
  return target.namespace ? `LVMNode ${target.namespace}/${target.node}` : `node ${target.node}`;
}

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** The target in a header value; undefined when absent; an error message when malformed. */
export function parseTarget(
  value: string | string[] | undefined,
): CallTarget | undefined | { error: string } {
  if (value === undefined) return undefined;
  if (Array.isArray(value) || value.length > 317)
    return { error: `${TARGET_HEADER} must be given once, as <node> or <namespace>/<node>` };
  const parts = value.split("/");
  const [a, b] = parts;
  if (parts.length > 2 || !a || !NAME.test(a) || (b !== undefined && !NAME.test(b)))
    return {
      error: `${TARGET_HEADER} must be <node> or <namespace>/<node>, got ${JSON.stringify(value.slice(0, 80))}`,
    };
  return b === undefined ? { node: a } : { node: b, namespace: a };
}

/**
 * Why an agent serving `node` (LVMNodes in `namespace`; "" = any) must refuse a call for `target`,
 * or undefined when it may serve it.
 */
export function targetMismatch(target: CallTarget, node: string, namespace: string): string | undefined {
  if (target.node !== node)
    return `this is the agent of node ${node}; the call is for ${describeTarget(target)}: refused, nothing was done`;
  if (target.namespace !== undefined && namespace !== "" && target.namespace !== namespace)
    return `this agent serves the LVMNodes of namespace ${namespace}; the call is for ${describeTarget(target)}: refused, nothing was done`;
  return undefined;
}
