import { DEFAULT_AGENT_PORT, agentManifests } from "./agent-workload";
import { agentTlsSecretName } from "./agent-tls";
import { WEBHOOK_PORT, webhookTlsSecretName } from "./admission";
import { agentImageRef } from "./image-ref";
import type { LvmSystemArgs } from "./lvm-system-args";
import { monitoringManifests, type MonitoredSystem } from "./monitoring";
import { networkPolicyManifests, type FencedSystem } from "./network-policies";
import { operatorIssuance } from "./operator-issuance";
import {
  OPERATOR_PORT,
  operatorLabels,
  operatorManifests,
  type OperatorPlacement,
} from "./operator-workload";
import { approverClusterRole, clusterModeManifests, provisionerManifests } from "./system-rbac";
import { namespaceManifest, planSystem, type SystemPlan } from "./system-plan";

/*
 * Every object LvmSystem deploys but its CRDs (read from deploy/crds) and TopoLVM's chart, as plain
 * manifests, decided in one place: LvmSystem makes each a resource (with the order it needs between
 * them), `pulumi-lvm manifests` prints them for kubectl, Argo CD or Flux. Plain values in give plain
 * objects out; an Output given as an image stays an Output in the objects (only LvmSystem can).
 */

/** A Kubernetes object as the builders make it. */
export interface KubeManifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string };
}

/** The system's objects, by part (each part's builder in its own file). */
export function systemParts(name: string, args: LvmSystemArgs) {
  const plan = planSystem(name, args);
  const operator = operatorPlacement(plan, args);
  return {
    namespace: namespaceManifest(plan),
    provisioner: provisionerManifests(plan),
    clusterMode: clusterModeManifests(plan, args.clusterModeSubjects ?? []),
    approver: approverClusterRole(),
    ...(operator ? { operator: operatorManifests(operator, args.operator) } : {}),
    agent: agentManifests(plan, args),
    networkPolicies: networkPolicyManifests(fencedSystem(plan, args), args.networkPolicies),
    monitoring: monitoringManifests(monitoredSystem(plan, args), args.monitoring),
  };
}

/** Every manifest of `parts` (systemParts), in the order they appear there. */
export function manifestsOf(parts: unknown): KubeManifest[] {
  if (Array.isArray(parts)) return parts.flatMap(manifestsOf);
  if (typeof parts !== "object" || parts === null) return [];
  if ("apiVersion" in parts && "kind" in parts) return [parts as KubeManifest];
  return Object.values(parts).flatMap(manifestsOf);
}

/** Where the operator runs and what it is told; undefined when it is not deployed. */
function operatorPlacement(plan: SystemPlan, args: LvmSystemArgs): OperatorPlacement | undefined {
  if (!plan.operator) return undefined;
  const agentTlsSecret = agentTlsSecretName(plan.agent, args);
  const issuance = operatorIssuance(plan, args);
  return {
    namespace: plan.namespace,
    name: plan.operator,
    agentImage: agentImageRef(args),
    imagePullPolicy: args.agentImagePullPolicy ?? "IfNotPresent",
    ...(agentTlsSecret ? { agentTlsSecret } : {}),
    ...(args.nodeSelector ? { agentNodeSelector: args.nodeSelector } : {}),
    ...(issuance ? { issuance } : {}),
    ...(args.certificates ? { certificates: args.certificates } : {}),
  };
}

/** What the NetworkPolicies fence: the agents, and the operator when it is deployed. */
function fencedSystem(plan: SystemPlan, args: LvmSystemArgs): FencedSystem {
  return {
    namespace: plan.namespace,
    agent: { name: plan.agent, labels: plan.selectorLabels, port: args.agentPort ?? DEFAULT_AGENT_PORT },
    ...(plan.operator
      ? {
          operator: {
            name: plan.operator,
            labels: operatorLabels(plan.operator),
            metricsPort: OPERATOR_PORT,
            ...(webhookTlsSecretName(plan.operator, args.operator?.admission)
              ? { webhookPort: WEBHOOK_PORT }
              : {}),
          },
        }
      : {}),
  };
}

/** What the monitoring objects scrape: the agents (HTTPS unless plain HTTP), and the operator. */
function monitoredSystem(plan: SystemPlan, args: LvmSystemArgs): MonitoredSystem {
  return {
    namespace: plan.namespace,
    agent: {
      name: plan.agent,
      labels: plan.selectorLabels,
      port: args.agentPort ?? DEFAULT_AGENT_PORT,
      https: agentTlsSecretName(plan.agent, args) !== undefined,
    },
    ...(plan.operator
      ? { operator: { name: plan.operator, labels: operatorLabels(plan.operator), port: OPERATOR_PORT } }
      : {}),
  };
}
