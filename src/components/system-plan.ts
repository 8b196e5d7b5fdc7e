import type { LvmSystemArgs } from "./lvm-system-args";

export const DEFAULT_NAMESPACE = "lvm-system";

export interface SystemPlan {
  readonly namespace: string;
  readonly namespaceLabels: Record<string, string>;
  /** Name of the agent's ServiceAccount, Role, RoleBinding and DaemonSet. */
  readonly agent: string;
  readonly provisioner: string;
  /** Name of the Role and ClusterRole NodeSet cluster mode needs. */
  readonly clusterMode: string;
  /** Name of the operator's ServiceAccount, RBAC and Deployment; undefined when it is not deployed. */
  readonly operator?: string;
  readonly selectorLabels: Record<string, string>;
}

export function planSystem(name: string, args: LvmSystemArgs): SystemPlan {
  return {
    namespace: args.namespace ?? DEFAULT_NAMESPACE,
    namespaceLabels: {
      // The agent must run privileged; Pod Security Admission would refuse it under baseline/restricted.
      "pod-security.kubernetes.io/enforce": "privileged",
      // TopoLVM's pod webhook must not act on its own namespace.
      ...(args.topolvm ? { "topolvm.io/webhook": "ignore" } : {}),
    },
    agent: `${name}-agent`,
    provisioner: `${name}-provisioner`,
    clusterMode: `${name}-cluster-mode`,
    ...(args.operator?.enabled === false ? {} : { operator: `${name}-operator` }),
    selectorLabels: { "app.kubernetes.io/name": "pulumi-lvm-agent", "app.kubernetes.io/instance": name },
  };
}

/** The system's Namespace. */
export function namespaceManifest(plan: SystemPlan) {
  return {
    apiVersion: "v1" as const,
    kind: "Namespace" as const,
    metadata: { name: plan.namespace, labels: plan.namespaceLabels },
  };
}
