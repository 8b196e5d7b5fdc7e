import { z } from "zod";
import { labels } from "./validate-args";

/*
 * Where the operator's pods run. Its token drives every agent, so the node it runs on can drive
 * every node's disks: by default it prefers nodes the agents do not run on (the agents' node
 * selector, as LvmSystem's `nodeSelector` gives it), and the user may pin it to trusted nodes.
 */

/**
 * The operator pods' affinity, per kind as core/v1 Affinity has them (passed to the API server as
 * given, which checks them). Each kind given replaces LvmSystem's own of that kind.
 */
export interface OperatorAffinity {
  /** @default prefer nodes the agents' nodeSelector does not select (none when it selects every Linux node) */
  // Free-form: Pulumi's schema inference maps `any` (not `unknown`) to its Any type.
  readonly nodeAffinity?: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** @default none */
  readonly podAffinity?: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** @default the two replicas preferably on two nodes */
  readonly podAntiAffinity?: { [key: string]: any }; // eslint-disable-line @typescript-eslint/no-explicit-any
}

const OS_LABEL = "kubernetes.io/os";
export const DEFAULT_OPERATOR_NODE_SELECTOR = { [OS_LABEL]: "linux" };

export const operatorAffinitySchema = z.strictObject({
  nodeAffinity: z.record(z.string(), z.unknown()).optional(),
  podAffinity: z.record(z.string(), z.unknown()).optional(),
  podAntiAffinity: z.record(z.string(), z.unknown()).optional(),
});
export const operatorNodeSelectorSchema = labels;

/**
 * Preferred node affinity away from the agents' nodes: a node is preferred when it lacks one of the
 * agents' node selector labels (NotIn also holds for a node without the label). The OS label is
 * left out: it tells storage nodes from others nowhere. None for an empty selector.
 */
export function awayFromAgents(agentNodeSelector: Record<string, string> | undefined) {
  const terms = Object.entries(agentNodeSelector ?? {})
    .filter(([key]) => key !== OS_LABEL)
    .map(([key, value]) => ({
      weight: 100,
      preference: { matchExpressions: [{ key, operator: "NotIn", values: [value] }] },
    }));
  return terms.length ? { preferredDuringSchedulingIgnoredDuringExecution: terms } : undefined;
}

/** The operator pods' affinity: LvmSystem's defaults, each kind the user gave replacing ours. */
export function operatorAffinity(
  replicaLabels: Record<string, string>,
  agentNodeSelector: Record<string, string> | undefined,
  given: OperatorAffinity = {},
) {
  const nodeAffinity = awayFromAgents(agentNodeSelector);
  return {
    ...(nodeAffinity ? { nodeAffinity } : {}),
    // A drained or failed node takes one replica at most, when the scheduler can help it.
    podAntiAffinity: {
      preferredDuringSchedulingIgnoredDuringExecution: [
        {
          weight: 100,
          podAffinityTerm: {
            topologyKey: "kubernetes.io/hostname",
            labelSelector: { matchLabels: replicaLabels },
          },
        },
      ],
    },
    ...given,
  };
}
