import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { agentImageRef } from "./image-ref";
import { agentWorkload, DEFAULT_AGENT_PORT } from "./agent-workload";
import { agentTlsSecretName } from "./agent-tls";
import { operatorIssuance } from "./operator-issuance";
import type { WorkloadContext } from "./workload-context";
import { validateSystem, type LvmSystemArgs, type TopolvmSettings } from "./lvm-system-args";
import { monitoringResources } from "./monitoring";
import { networkFences } from "./network-policies";
import { OPERATOR_PORT, operatorLabels, operatorWorkload } from "./operator-workload";
import { WEBHOOK_PORT, webhookTlsSecretName } from "./admission";
import { recordSystem } from "./peer-facts";
import { crdResource } from "./retained-crd";
import { rememberServedNodeSets } from "./served-node-sets";
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

    const namespace = new k8s.core.v1.Namespace(
      `${name}-namespace`,
      { metadata: { name: plan.namespace, labels: plan.namespaceLabels } },
      { parent: this },
    );
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
    const agentTlsSecret = agentTlsSecretName(plan.agent, args);
    const provisioner = provisionerAccess(plan, at);
    const clusterMode = clusterModeAccess(plan, args.clusterModeSubjects ?? [], at);
    const issuance = plan.operator ? operatorIssuance(plan, args) : undefined;
    approverAccess(name, at);
    const operator = plan.operator
      ? operatorWorkload(
          {
            namespace: plan.namespace,
            name: plan.operator,
            agentImage: agentImageRef(args),
            imagePullPolicy: args.agentImagePullPolicy ?? "IfNotPresent",
            ...(agentTlsSecret ? { agentTlsSecret } : {}),
            ...(args.nodeSelector ? { agentNodeSelector: args.nodeSelector } : {}),
            ...(issuance ? { issuance } : {}),
            ...(args.certificates ? { certificates: args.certificates } : {}),
          },
          args.operator,
          at,
        )
      : undefined;
    const agent = agentWorkload(plan, args, at);
    networkFences(
      {
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
      },
      args.networkPolicies,
      at,
    );
    monitoringResources(
      {
        namespace: plan.namespace,
        agent: {
          name: plan.agent,
          labels: plan.selectorLabels,
          port: args.agentPort ?? DEFAULT_AGENT_PORT,
          https: agent.tlsSecret !== undefined,
        },
        ...(plan.operator
          ? { operator: { name: plan.operator, labels: operatorLabels(plan.operator), port: OPERATOR_PORT } }
          : {}),
      },
      args.monitoring,
      at,
    );
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
  for (const [a, b] of plan.overlaps)
    pulumi.log.warn(
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
