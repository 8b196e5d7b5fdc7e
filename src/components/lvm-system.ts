import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { agentWorkload } from "./agent-workload";
import type { WorkloadContext } from "./workload-context";
import { validateSystem, type LvmSystemArgs, type TopolvmSettings } from "./lvm-system-args";
import { monitoringResources } from "./monitoring";
import { networkFences } from "./network-policies";
import { operatorWorkload } from "./operator-workload";
import { recordSystem } from "./peer-facts";
import { crdResource } from "./retained-crd";
import { rememberServedNodeSets } from "./served-node-sets";
import { systemParts } from "./system-manifests";
import { approverAccess, clusterModeAccess, provisionerAccess } from "./system-rbac";
import { planSystem } from "./system-plan";
import { topolvmChartSource } from "./topolvm-chart";
import type { TopolvmPlan } from "./topolvm-values";

// The system's parts, each in its own file; exported from here as before.
export type {
  LvmSystemArgs,
  OperatorSettings,
  ResourceRequirements,
  Subject,
  Toleration,
  TopolvmNodeSet,
  TopolvmSettings,
} from "./lvm-system-args";
export type { MonitoringSettings, MonitoringThresholdSettings } from "./monitoring";
export { DEFAULT_NAMESPACE, planSystem, type SystemPlan } from "./system-plan";
export {
  AGENT_STATE_DIR,
  DEFAULT_AGENT_PORT,
  HOST_COMMAND_PREFIX,
  agentDaemonSet,
  agentFlags,
} from "./agent-workload";
export { clusterModeRules, provisionerRules } from "./system-rbac";
export { TOPOLVM_REPOSITORY } from "./topolvm-chart";

/**
 * The cluster-wide part of pulumi-lvm: its namespace, the lvm.topolvm.io CRDs, the node agent
 * (DaemonSet, service account, least-privilege RBAC), the operator, the service account that may
 * call the agents, and optionally TopoLVM, with one lvmd per node set serving its device classes on
 * its nodes.
 */
export class LvmSystem extends pulumi.ComponentResource {
  /** The namespace. */
  public readonly namespace!: pulumi.Output<string>;
  /** Names of the CustomResourceDefinitions. */
  public readonly crdNames!: pulumi.Output<string[]>;
  /** The agents' service account. */
  public readonly agentServiceAccountName!: pulumi.Output<string>;
  /** The agent DaemonSet. */
  public readonly agentDaemonSetName!: pulumi.Output<string>;
  /** The service account the agents accept apply/teardown calls from (their SubjectAccessReview). */
  public readonly provisionerServiceAccountName!: pulumi.Output<string>;
  /** The Role (in the namespace) and ClusterRole that NodeSet cluster mode needs of whoever runs `pulumi up`. */
  public readonly clusterModeRoleName!: pulumi.Output<string>;
  public readonly clusterModeClusterRoleName!: pulumi.Output<string>;
  /** The operator's Deployment; absent when the operator is not deployed. */
  public readonly operatorDeploymentName?: pulumi.Output<string>;
  /** The TopoLVM Helm release; absent when TopoLVM is not installed. */
  public readonly topolvmReleaseName?: pulumi.Output<string>;

  constructor(name: string, args: LvmSystemArgs, opts?: pulumi.ComponentResourceOptions) {
    const { crds, topolvm } = validateSystem(name, args);
    super(LVM_SYSTEM_TYPE, name, {}, opts);
    // A NodeSet given `{ system: this }` is checked against the node sets lvmd is configured for.
    if (args.topolvm) rememberServedNodeSets(this, name, args.topolvm);
    const plan = planSystem(name, args);
    const parts = systemParts(name, args);

    const namespace = new k8s.core.v1.Namespace(`${name}-namespace`, parts.namespace, { parent: this });
    // Kept (applied as Patches: created, adopted from an earlier install, upgraded) or deleted with the stack.
    const crdResources = crds.map((crd) =>
      crdResource(`${name}-${crd.metadata.name}`, crd, args.retainCrdsOnDelete ?? true, { parent: this }),
    );
    recordSystem(this, {
      name,
      namespace: plan.namespace,
      namespaceResource: namespace,
      ...(args.nodeSelector ? { agentNodeSelector: args.nodeSelector } : {}),
      tolerations: args.tolerations ?? [],
      installsTopolvm: args.topolvm !== undefined,
    });
    const at = { parent: this, namespace, crds: crdResources };
    const provisioner = provisionerAccess(parts.provisioner, at);
    const clusterMode = clusterModeAccess(parts.clusterMode, at);
    approverAccess(name, parts.approver, at);
    const operator = parts.operator ? operatorWorkload(parts.operator, at) : undefined;
    const agent = agentWorkload(parts.agent, at);
    networkFences(parts.networkPolicies, at);
    monitoringResources(parts.monitoring, at);
    if (args.topolvm && topolvm) topolvmRelease(name, args.topolvm, topolvm, plan.namespace, at);

    this.namespace = namespace.metadata.name;
    this.crdNames = pulumi.output(crds.map((c) => c.metadata.name));
    this.agentServiceAccountName = agent.serviceAccount.metadata.name;
    this.agentDaemonSetName = agent.daemonSet.metadata.name;
    this.provisionerServiceAccountName = provisioner.serviceAccount.metadata.name;
    this.clusterModeRoleName = clusterMode.role.metadata.name;
    this.clusterModeClusterRoleName = clusterMode.clusterRole.metadata.name;
    if (operator) this.operatorDeploymentName = operator.deployment.metadata.name;
    if (args.topolvm && topolvm)
      this.topolvmReleaseName = pulumi.output(args.topolvm.releaseName ?? "topolvm");
    this.registerOutputs({
      namespace: this.namespace,
      crdNames: this.crdNames,
      agentServiceAccountName: this.agentServiceAccountName,
      agentDaemonSetName: this.agentDaemonSetName,
      provisionerServiceAccountName: this.provisionerServiceAccountName,
      clusterModeRoleName: this.clusterModeRoleName,
      clusterModeClusterRoleName: this.clusterModeClusterRoleName,
      operatorDeploymentName: this.operatorDeploymentName,
      topolvmReleaseName: this.topolvmReleaseName,
    });
  }
}

export const LVM_SYSTEM_TYPE = "pulumi-lvm:index:LvmSystem";

/** TopoLVM's chart, as `topolvm` gives it: one lvmd per node set, on its nodes. */
function topolvmRelease(
  name: string,
  settings: TopolvmSettings,
  plan: TopolvmPlan,
  namespace: string,
  at: WorkloadContext,
): void {
  // A node that two node sets select belongs to neither: the agents leave it alone, and it runs no lvmd.
  // pulumi.log.warn's promise never rejects (an undelivered line goes to stderr): nothing to wait for.
  for (const [a, b] of plan.overlaps)
    void pulumi.log.warn(
      `node sets "${a}" and "${b}" may select the same nodes; a node both select gets neither's volume groups and runs no lvmd`,
      at.parent,
    );
  new k8s.helm.v4.Chart(
    `${name}-topolvm`,
    {
      ...topolvmChartSource(settings),
      name: settings.releaseName ?? "topolvm",
      namespace,
      values: plan.values,
    },
    { parent: at.parent, dependsOn: [at.namespace] },
  );
}
