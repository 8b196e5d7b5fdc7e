/**
 * What the cluster knows of each node's agent, for the support bundle's agents/nodes.json: the
 * state the agent reported through its LVMNode (status: volume groups with their devices and thin
 * pools, device classes, the applied generation, approvals, conditions) beside its pod's state.
 */

/** The parts of a core/v1 Pod the bundle reads (the API server's answer, unchecked). */
export interface BundlePod {
  readonly metadata: { readonly name: string; readonly namespace?: string };
  readonly spec?: {
    readonly nodeName?: string;
    readonly containers?: ReadonlyArray<{ readonly name: string }>;
  };
  readonly status?: {
    readonly phase?: string;
    readonly startTime?: string;
    readonly conditions?: ReadonlyArray<{ readonly type: string; readonly status: string }>;
    readonly containerStatuses?: ReadonlyArray<{
      readonly name: string;
      readonly restartCount?: number;
      readonly ready?: boolean;
      readonly image?: string;
    }>;
  };
}

interface NodeShape {
  readonly metadata?: { readonly name?: string; readonly namespace?: string };
  readonly spec?: { readonly nodeName?: string };
  readonly status?: Readonly<Record<string, unknown>>;
}

/** One entry per LVMNode: its node, the agent's report (the status as it is) and the agent's pod(s) on that node. */
export function agentsView(nodes: readonly NodeShape[], agentPods: readonly BundlePod[]): object[] {
  return nodes.map((n) => {
    const node = n.spec?.nodeName ?? n.metadata?.name ?? "";
    const pods = agentPods.filter((p) => p.spec?.nodeName === node);
    return {
      node,
      lvmNode: `${n.metadata?.namespace ?? ""}/${n.metadata?.name ?? ""}`,
      reported:
        n.status ?? "no status yet: the agent has not reported, or the operator has not applied this node",
      agentPods: pods.length
        ? pods.map((p) => ({
            name: `${p.metadata.namespace ?? ""}/${p.metadata.name}`,
            phase: p.status?.phase,
            ready: p.status?.conditions?.find((c) => c.type === "Ready")?.status,
            startTime: p.status?.startTime,
            containers: (p.status?.containerStatuses ?? []).map((s) => ({
              name: s.name,
              ready: s.ready,
              restartCount: s.restartCount,
              image: s.image,
            })),
          }))
        : "none found on this node (or the agents' pods could not be listed)",
    };
  });
}
