import { isIP } from "node:net";
import * as k8s from "@pulumi/kubernetes";
import { z } from "zod";
import type { WorkloadContext } from "./workload-context";
import { labels, namespaceName } from "./validate-args";

/*
 * The network fences LvmSystem puts around its own pods: one NetworkPolicy for the agents, one for
 * the operator, ingress only. They select the agent and operator pods and nothing else in the
 * namespace (TopoLVM's pods there are left to TopoLVM's chart). A CNI that does not enforce
 * NetworkPolicy stores them and does nothing (docs/components.md, "Network policies").
 */

/** Where the API server's connections to pods come from (its pod proxy, its webhook calls). */
export interface ControlPlaneSources {
  /**
   * Address ranges: the control plane nodes' addresses, or the addresses a managed control plane
   * reaches the nodes from.
   * @default ["0.0.0.0/0", "::/0"] (every address: see docs/components.md, "Network policies")
   * @example ["10.0.0.0/28"]
   */
  readonly cidrs?: string[];
  /**
   * Pods the API server's connections come through, e.g. konnectivity agents in kube-system.
   * @default []
   * @example [{ namespace: "kube-system", labels: { "k8s-app": "konnectivity-agent" } }]
   */
  readonly pods?: ControlPlanePods[];
}

/** Pods in one namespace (by its name) with these labels. */
export interface ControlPlanePods {
  /** @example "kube-system" */
  readonly namespace: string;
  /** @default {} (every pod of the namespace) @example { "k8s-app": "konnectivity-agent" } */
  readonly labels?: Record<string, string>;
}

/** LvmSystem's NetworkPolicies (docs/components.md, "Network policies"). */
export interface NetworkPolicySettings {
  /** Render the NetworkPolicies. @default true */
  readonly enabled?: boolean;
  /**
   * The control plane: may reach the agents' port (NodeSet cluster mode calls the agents through the
   * API server's pod proxy) and the operator's admission webhook.
   * @default { cidrs: ["0.0.0.0/0", "::/0"] }
   */
  readonly controlPlane?: ControlPlaneSources;
  /**
   * Namespaces whose pods may scrape /metrics: the operator's metrics port, and the agents' port
   * (which serves /metrics beside the agent's API; the API still authenticates every caller).
   * `[]`: nobody scrapes them.
   * @default ["monitoring"]
   */
  readonly monitoringNamespaces?: string[];
}

/** Every IPv4 and IPv6 address: where the API server's connections come from varies by cluster. */
export const DEFAULT_CONTROL_PLANE_CIDRS = ["0.0.0.0/0", "::/0"];
export const DEFAULT_MONITORING_NAMESPACES = ["monitoring"];

const cidr = z.string().superRefine((value, ctx) => {
  const [address, prefix, extra] = value.split("/");
  const family = isIP(address ?? "");
  const bits = Number(prefix);
  const max = family === 6 ? 128 : 32;
  if (extra !== undefined || family === 0 || !/^\d+$/.test(prefix ?? "") || bits > max)
    ctx.addIssue({
      code: "custom",
      message: `must be an IPv4 or IPv6 CIDR such as "10.0.0.0/24" or "fd00::/64" (got ${JSON.stringify(value)})`,
    });
});

export const networkPolicySettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  controlPlane: z
    .strictObject({
      cidrs: z.array(cidr).optional(),
      pods: z.array(z.strictObject({ namespace: namespaceName, labels: labels.optional() })).optional(),
    })
    .optional(),
  monitoringNamespaces: z.array(namespaceName).optional(),
});

/** What the policies fence: the system's namespace, its agents and (when deployed) its operator. */
export interface FencedSystem {
  readonly namespace: string;
  readonly agent: { readonly name: string; readonly labels: Record<string, string>; readonly port: number };
  readonly operator?: {
    readonly name: string;
    readonly labels: Record<string, string>;
    /** /healthz, /readyz, /metrics. */
    readonly metricsPort: number;
    /** The admission webhook's port; undefined when admission is off. */
    readonly webhookPort?: number;
  };
}

type Peer = Record<string, unknown>;
type Rule = { from: Peer[]; ports: { protocol: "TCP"; port: number }[] };

/** The control plane's peers: ipBlocks and pods in named namespaces. */
function controlPlanePeers(sources: ControlPlaneSources = {}): Peer[] {
  const cidrs = sources.cidrs ?? DEFAULT_CONTROL_PLANE_CIDRS;
  return [
    ...cidrs.map((c) => ({ ipBlock: { cidr: c } })),
    ...(sources.pods ?? []).map((p) => ({
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": p.namespace } },
      podSelector: { matchLabels: { ...(p.labels ?? {}) } },
    })),
  ];
}

/** Pods of the named namespaces (by the label the API server sets on every namespace). */
function namespacesPeer(names: readonly string[]): Peer[] {
  if (names.length === 0) return [];
  return [
    {
      namespaceSelector: {
        matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [...names] }],
      },
    },
  ];
}

/**
 * A rule is kept only when it names a source: an ingress rule with no `from` admits every source,
 * the opposite of what an empty list of sources means here.
 */
function rule(from: Peer[], port: number): Rule[] {
  return from.length === 0 ? [] : [{ from, ports: [{ protocol: "TCP", port }] }];
}

/**
 * The NetworkPolicies, as plain manifests (the API server's networking.k8s.io/v1 shape):
 * - the agents' port from the operator's pods and the control plane (cluster mode's pod proxy), and
 *   from the monitoring namespaces (/metrics is served on the same port);
 * - the operator's webhook port from the control plane, its metrics port from the monitoring namespaces.
 * Each policy selects its pods and lists every allowed source: anything else is refused (but the
 * node's own traffic, e.g. the kubelet's probes, which NetworkPolicy does not block). None when
 * `enabled: false`.
 */
export function networkPolicyManifests(system: FencedSystem, settings: NetworkPolicySettings = {}) {
  if (settings.enabled === false) return [];
  const controlPlane = controlPlanePeers(settings.controlPlane);
  const monitoring = namespacesPeer(settings.monitoringNamespaces ?? DEFAULT_MONITORING_NAMESPACES);
  const policy = (name: string, podLabels: Record<string, string>, ingress: Rule[]) => ({
    apiVersion: "networking.k8s.io/v1" as const,
    kind: "NetworkPolicy" as const,
    metadata: { name, namespace: system.namespace, labels: { ...podLabels } },
    spec: { podSelector: { matchLabels: { ...podLabels } }, policyTypes: ["Ingress"], ingress },
  });
  const { agent, operator } = system;
  const fromOperator = operator ? [{ podSelector: { matchLabels: { ...operator.labels } } }] : [];
  return [
    policy(agent.name, agent.labels, [
      ...rule([...fromOperator, ...controlPlane], agent.port),
      ...rule(monitoring, agent.port),
    ]),
    ...(operator
      ? [
          policy(operator.name, operator.labels, [
            ...(operator.webhookPort === undefined ? [] : rule(controlPlane, operator.webhookPort)),
            ...rule(monitoring, operator.metricsPort),
          ]),
        ]
      : []),
  ];
}

/** networkPolicyManifests' objects as resources. */
export function networkFences(
  manifests: ReturnType<typeof networkPolicyManifests>,
  at: WorkloadContext,
): k8s.networking.v1.NetworkPolicy[] {
  return manifests.map(
    (manifest) =>
      new k8s.networking.v1.NetworkPolicy(`${manifest.metadata.name}-ingress`, manifest, {
        parent: at.parent,
        dependsOn: [at.namespace],
      }),
  );
}
