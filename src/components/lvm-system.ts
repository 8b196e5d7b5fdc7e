import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { API_GROUP, dnsLabelProblem, QUANTITY_PATTERN, type ValidationProblem } from "../api";
import { defaultCrdDirectory, loadCrdManifests, type CrdManifest } from "./crds";
import { operatorDeployment, operatorRules, type OperatorSettings } from "./operator-workload";
import { rememberServedNodeSets } from "./served-node-sets";
import { checkTopolvmArgs, topolvmArgsSchema, type TopolvmSettings } from "./topolvm-args";
import { topolvmChartSource } from "./topolvm-chart";
import type { TopolvmPlan } from "./topolvm-values";
import { argsProblems, labels, namespaceName, objectName, throwIfInvalid } from "./validate-args";
import { DEFAULT_IMAGE } from "../version";

/** A toleration of the agent pods (core/v1 Toleration). */
export interface Toleration {
  /** The taint key; empty with operator Exists matches every taint. @example "node-role.kubernetes.io/edge" */
  readonly key?: string;
  /** Exists or Equal. @default "Equal" */
  readonly operator?: string;
  /** The taint value for operator Equal. @example "true" */
  readonly value?: string;
  /** NoSchedule, PreferNoSchedule or NoExecute; empty matches all effects. @example "NoSchedule" */
  readonly effect?: string;
  /** For NoExecute: how long the pod stays bound after the taint appears. @example 300 */
  readonly tolerationSeconds?: number;
}

/** Compute resources of the agent container (core/v1 ResourceRequirements). */
export interface ResourceRequirements {
  /** @example { cpu: "20m", memory: "64Mi" } */
  readonly requests?: Record<string, string>;
  /** @example { memory: "256Mi" } */
  readonly limits?: Record<string, string>;
}

export type { OperatorSettings } from "./operator-workload";
export type { TopolvmSettings, TopolvmNodeSet } from "./topolvm-args";

/** Who a role is bound to (rbac.authorization.k8s.io/v1 Subject). */
export interface Subject {
  /** User, Group or ServiceAccount. @example "Group" */
  readonly kind: string;
  /** @example "platform-deployers" */
  readonly name: string;
  /** A ServiceAccount's namespace. @default the LvmSystem's namespace (ServiceAccount only) */
  readonly namespace?: string;
}

/** Arguments of an LvmSystem. */
export interface LvmSystemArgs {
  /** The namespace, created here, of the agents, the LVMNodeSets and LVMNodes, and TopoLVM. @default "lvm-system" */
  readonly namespace?: string;
  /**
   * The node agent's (and the operator's) image, pinned. The default is the image this version's
   * `npm run image` builds (docs/image.md): load it on the nodes or push it to your registry and
   * name it here.
   * @default "localhost/pulumi-lvm:<this package's version>"
   * @example "registry.example.com/storage/pulumi-lvm:0.1.0"
   */
  readonly agentImage?: string;
  /** Always, IfNotPresent or Never. @default "IfNotPresent" */
  readonly agentImagePullPolicy?: string;
  /** The agent's port (API, /healthz, /readyz, /metrics). @default 8080 */
  readonly agentPort?: number;
  /** How the image starts the agent. @default ["pulumi-lvm", "agent"] */
  readonly agentCommand?: string[];
  /** Extra agent flags (`pulumi-lvm agent --help`), after ours. @default [] @example ["--command-timeout", "5m"] */
  readonly agentArgs?: string[];
  /**
   * A kubernetes.io/tls Secret in the namespace with the agent's serving certificate: the agent then
   * serves HTTPS. Without it the agent serves plain HTTP on the pod network (`--allow-plain-http`),
   * where bearer tokens travel unencrypted; set it outside a lab.
   * @default none
   * @example "lvm-agent-tls"
   */
  readonly agentTlsSecretName?: string;
  /** Nodes the agents run on. @default { "kubernetes.io/os": "linux" } */
  readonly nodeSelector?: Record<string, string>;
  /** Taints the agents tolerate; storage nodes at the edge are often tainted. @default [] @example [{ operator: "Exists" }] */
  readonly tolerations?: Toleration[];
  /** @default { requests: { cpu: "20m", memory: "64Mi" }, limits: { memory: "256Mi" } } */
  readonly agentResources?: ResourceRequirements;
  /** @default none @example "system-node-critical" */
  readonly priorityClassName?: string;
  /**
   * Who runs `pulumi up` for NodeSets in cluster mode: bound to the least-privilege roles that mode
   * needs (clusterModeRules: list nodes; in the namespace list the agent pods, proxy to them and
   * request a token for the provisioner service account only). The roles are created either way;
   * cluster admins need no binding.
   * @default []
   * @example [{ kind: "Group", name: "platform-deployers" }]
   */
  readonly clusterModeSubjects?: Subject[];
  /** Where the CRD YAML is read from at construction. @default this package's deploy/crds */
  readonly crdDirectory?: string;
  /**
   * Leave the CRDs in the cluster when this component is deleted: deleting a CRD deletes every
   * LVMNodeSet and LVMNode with it.
   * @default true
   */
  readonly retainCrdsOnDelete?: boolean;
  /** Install TopoLVM from its Helm chart. @default not installed */
  readonly topolvm?: TopolvmSettings;
  /**
   * The operator: turns the namespace's LVMNodeSets into LVMNodes, applies them through the agents
   * and keeps their status (docs/operator.md).
   * @default deployed, from the agent's image
   * @example { resources: { limits: { memory: "512Mi" } } }
   */
  readonly operator?: OperatorSettings;
}

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
    const { crds, topolvm } = validate(name, args);
    super(LVM_SYSTEM_TYPE, name, {}, opts);
    // A NodeSet given `{ system: this }` is checked against the node sets lvmd is configured for.
    if (args.topolvm) rememberServedNodeSets(this, name, args.topolvm);
    const plan = planSystem(name, args);
    const parent = { parent: this };

    const ns = new k8s.core.v1.Namespace(
      `${name}-namespace`,
      { metadata: { name: plan.namespace, labels: plan.namespaceLabels } },
      parent,
    );
    const inNamespace = { parent: this, dependsOn: [ns] };
    const crdResources = crds.map(
      (crd) =>
        // The generated manifest as-is; its shape is the apiserver's to check.
        new k8s.apiextensions.v1.CustomResourceDefinition(
          `${name}-${crd.metadata.name}`,
          crd as unknown as k8s.apiextensions.v1.CustomResourceDefinitionArgs,
          {
            parent: this,
            retainOnDelete: args.retainCrdsOnDelete ?? true,
          },
        ),
    );

    const agentSa = new k8s.core.v1.ServiceAccount(
      plan.agent,
      { metadata: { name: plan.agent, namespace: plan.namespace } },
      inNamespace,
    );
    // TokenReview and SubjectAccessReview create, for delegated authentication and authorization of
    // callers (as the kubelet does): exactly the built-in system:auth-delegator ClusterRole.
    new k8s.rbac.v1.ClusterRoleBinding(
      `${plan.agent}-auth-delegator`,
      {
        metadata: { name: `${plan.agent}-auth-delegator` },
        ...roleBindingBody(plan.agent, plan.namespace, "ClusterRole", "system:auth-delegator"),
      },
      { parent: this, dependsOn: [agentSa] },
    );
    const daemonSet = new k8s.apps.v1.DaemonSet(plan.agent, agentDaemonSet(plan, args), {
      parent: this,
      dependsOn: [ns, agentSa, ...crdResources],
    });

    const provisionerSa = new k8s.core.v1.ServiceAccount(
      plan.provisioner,
      { metadata: { name: plan.provisioner, namespace: plan.namespace } },
      inNamespace,
    );
    const provisionerRole = new k8s.rbac.v1.Role(
      plan.provisioner,
      { metadata: { name: plan.provisioner, namespace: plan.namespace }, rules: provisionerRules() },
      inNamespace,
    );
    new k8s.rbac.v1.RoleBinding(
      plan.provisioner,
      roleBinding(plan.provisioner, plan.namespace, "Role", plan.provisioner),
      {
        ...inNamespace,
        dependsOn: [ns, provisionerRole, provisionerSa],
      },
    );

    const clusterMode = clusterModeRules(plan.provisioner);
    const clusterModeRole = new k8s.rbac.v1.Role(
      plan.clusterMode,
      { metadata: { name: plan.clusterMode, namespace: plan.namespace }, rules: clusterMode.namespaced },
      inNamespace,
    );
    const clusterModeClusterRole = new k8s.rbac.v1.ClusterRole(
      plan.clusterMode,
      { metadata: { name: plan.clusterMode }, rules: clusterMode.clusterWide },
      parent,
    );
    const subjects = (args.clusterModeSubjects ?? []).map((s) => ({
      kind: s.kind,
      name: s.name,
      ...(s.kind === "ServiceAccount" ? { namespace: s.namespace ?? plan.namespace } : {}),
      ...(s.kind === "ServiceAccount" ? {} : { apiGroup: "rbac.authorization.k8s.io" }),
    }));
    if (subjects.length) {
      new k8s.rbac.v1.RoleBinding(
        plan.clusterMode,
        {
          metadata: { name: plan.clusterMode, namespace: plan.namespace },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: plan.clusterMode },
          subjects,
        },
        { parent: this, dependsOn: [ns, clusterModeRole] },
      );
      new k8s.rbac.v1.ClusterRoleBinding(
        plan.clusterMode,
        {
          metadata: { name: plan.clusterMode },
          roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: plan.clusterMode },
          subjects,
        },
        { parent: this, dependsOn: [clusterModeClusterRole] },
      );
    }

    if (plan.operator) {
      const rules = operatorRules();
      const operatorSa = new k8s.core.v1.ServiceAccount(
        plan.operator,
        { metadata: { name: plan.operator, namespace: plan.namespace } },
        inNamespace,
      );
      const operatorRole = new k8s.rbac.v1.Role(
        plan.operator,
        {
          metadata: { name: plan.operator, namespace: plan.namespace },
          rules: [...rules.nodeSets, ...rules.agentPods],
        },
        inNamespace,
      );
      new k8s.rbac.v1.RoleBinding(
        plan.operator,
        roleBinding(plan.operator, plan.namespace, "Role", plan.operator),
        {
          ...inNamespace,
          dependsOn: [ns, operatorRole, operatorSa],
        },
      );
      const operatorClusterRole = new k8s.rbac.v1.ClusterRole(
        plan.operator,
        { metadata: { name: plan.operator }, rules: rules.clusterWide },
        parent,
      );
      new k8s.rbac.v1.ClusterRoleBinding(
        plan.operator,
        {
          metadata: { name: plan.operator },
          ...roleBindingBody(plan.operator, plan.namespace, "ClusterRole", plan.operator),
        },
        { parent: this, dependsOn: [operatorClusterRole, operatorSa] },
      );
      const deployment = new k8s.apps.v1.Deployment(
        plan.operator,
        operatorDeployment(
          {
            namespace: plan.namespace,
            name: plan.operator,
            agentImage: args.agentImage ?? DEFAULT_IMAGE,
            imagePullPolicy: args.agentImagePullPolicy ?? "IfNotPresent",
          },
          args.operator,
        ),
        { parent: this, dependsOn: [ns, operatorSa, ...crdResources] },
      );
      this.operatorDeploymentName = deployment.metadata.name;
    }

    if (args.topolvm && topolvm) {
      // A node that two node sets select belongs to neither: the agents leave it alone, and it runs no lvmd.
      for (const [a, b] of topolvm.overlaps)
        pulumi.log.warn(
          `node sets "${a}" and "${b}" may select the same nodes; a node both select gets neither's volume groups and runs no lvmd`,
          this,
        );
      const release = args.topolvm.releaseName ?? "topolvm";
      new k8s.helm.v4.Chart(
        `${name}-topolvm`,
        {
          ...topolvmChartSource(args.topolvm),
          name: release,
          namespace: plan.namespace,
          values: topolvm.values,
        },
        inNamespace,
      );
      this.topolvmReleaseName = pulumi.output(release);
    }

    this.namespace = ns.metadata.name;
    this.crdNames = pulumi.output(crds.map((c) => c.metadata.name));
    this.agentServiceAccountName = agentSa.metadata.name;
    this.agentDaemonSetName = daemonSet.metadata.name;
    this.provisionerServiceAccountName = provisionerSa.metadata.name;
    this.clusterModeRoleName = clusterModeRole.metadata.name;
    this.clusterModeClusterRoleName = clusterModeClusterRole.metadata.name;
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
export const DEFAULT_NAMESPACE = "lvm-system";
export const DEFAULT_AGENT_PORT = 8080;
export { TOPOLVM_REPOSITORY } from "./topolvm-chart";
/** The agent's state (operation journal) survives pod restarts here, so an interrupted apply resumes. */
export const AGENT_STATE_DIR = "/var/lib/pulumi-lvm";
const TLS_DIR = "/etc/pulumi-lvm/tls";
/** lvm runs in the host's namespaces (its /etc/lvm, lock files and udev), entered through PID 1. */
export const HOST_COMMAND_PREFIX = "nsenter --target 1 --mount --uts --ipc --net --pid --";

/* ------------------------------------------------------------------------- validation ---- */

const quantity = z.string().regex(new RegExp(QUANTITY_PATTERN), {
  error: (i) => `must be a quantity such as "64Mi" or "20m" (got ${JSON.stringify(i.input)})`,
});

const resourceRequirements = z.strictObject({
  requests: z.record(z.string(), quantity).optional(),
  limits: z.record(z.string(), quantity).optional(),
});

const argsSchema = z.strictObject({
  namespace: namespaceName.optional(),
  agentImage: z
    .string()
    .refine((image) => image.length > 0, { error: "must not be empty" })
    .optional(),
  agentImagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
  agentPort: z.number().int().min(1).max(65535).optional(),
  agentCommand: z.array(z.string()).min(1).optional(),
  agentArgs: z.array(z.string()).optional(),
  agentTlsSecretName: objectName.optional(),
  nodeSelector: labels.optional(),
  tolerations: z
    .array(
      z.strictObject({
        key: z.string().optional(),
        operator: z.enum(["Exists", "Equal"]).optional(),
        value: z.string().optional(),
        effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
        tolerationSeconds: z.number().int().optional(),
      }),
    )
    .optional(),
  agentResources: resourceRequirements.optional(),
  priorityClassName: z.string().min(1).optional(),
  clusterModeSubjects: z
    .array(
      z.strictObject({
        kind: z.enum(["User", "Group", "ServiceAccount"]),
        name: z.string().min(1),
        namespace: namespaceName.optional(),
      }),
    )
    .optional(),
  crdDirectory: z.string().min(1).optional(),
  retainCrdsOnDelete: z.boolean().optional(),
  topolvm: topolvmArgsSchema.optional(),
  operator: z
    .strictObject({
      enabled: z.boolean().optional(),
      image: z.string().min(1).optional(),
      command: z.array(z.string()).min(1).optional(),
      args: z.array(z.string()).optional(),
      resources: resourceRequirements.optional(),
    })
    .optional(),
});

function validate(name: string, args: LvmSystemArgs): { crds: CrdManifest[]; topolvm?: TopolvmPlan } {
  const problems: ValidationProblem[] = [...argsProblems(argsSchema, args)];
  const topolvm = args.topolvm ? checkTopolvmArgs(args.topolvm, args) : undefined;
  if (topolvm) problems.push(...topolvm.problems);
  const nameProblem = dnsLabelProblem(`${name}-provisioner`);
  if (nameProblem)
    problems.push({
      path: "name",
      message: `prefixes the Kubernetes object names ("${name}-agent"), so ${nameProblem}`,
    });
  throwIfInvalid("LvmSystem", name, problems);
  let crds: CrdManifest[];
  try {
    crds = loadCrdManifests(args.crdDirectory ?? defaultCrdDirectory());
  } catch (e) {
    throw new Error(`LvmSystem "${name}" cannot read its CustomResourceDefinitions: ${(e as Error).message}`);
  }
  return { crds, ...(topolvm?.plan ? { topolvm: topolvm.plan } : {}) };
}

/* ------------------------------------------------------------------------------ plan ---- */

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

/**
 * Callers of the agents' /v1 API need `update` on the node's LVMNode: the agent's
 * SubjectAccessReview (src/agent/auth/authorizer.ts, REQUIRED_ACCESS) checks exactly that.
 */
export function provisionerRules() {
  return [{ apiGroups: [API_GROUP], resources: ["lvmnodes"], verbs: ["update"] }];
}

/**
 * What NodeSet cluster mode (provider/runtime/v1/cluster-agents.ts) does as whoever runs `pulumi up`,
 * and nothing more: list the nodes to evaluate the nodeSelector (cluster-wide); list the agent pods
 * and call them through the pod proxy (GET /v1/status is `get`, the POSTs are `create` on
 * pods/proxy); and request a token for the provisioner service account, and only that one. The
 * proxy reaches any pod of the namespace, which is why the agents still authenticate every call.
 */
export function clusterModeRules(provisioner: string) {
  return {
    namespaced: [
      { apiGroups: [""], resources: ["pods"], verbs: ["list"] },
      { apiGroups: [""], resources: ["pods/proxy"], verbs: ["get", "create"] },
      {
        apiGroups: [""],
        resources: ["serviceaccounts/token"],
        resourceNames: [provisioner],
        verbs: ["create"],
      },
    ],
    clusterWide: [{ apiGroups: [""], resources: ["nodes"], verbs: ["list"] }],
  };
}

function roleBindingBody(
  serviceAccount: string,
  namespace: string,
  kind: "Role" | "ClusterRole",
  role: string,
) {
  return {
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: role },
    subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
  };
}

function roleBinding(serviceAccount: string, namespace: string, kind: "Role" | "ClusterRole", role: string) {
  return {
    metadata: { name: serviceAccount, namespace },
    ...roleBindingBody(serviceAccount, namespace, kind, role),
  };
}

/** The agent DaemonSet. */
export function agentDaemonSet(plan: SystemPlan, args: LvmSystemArgs) {
  const port = args.agentPort ?? DEFAULT_AGENT_PORT;
  const hostPath = (name: string, path: string, type: string) => ({ name, hostPath: { path, type } });
  const tls = args.agentTlsSecretName;
  return {
    metadata: { name: plan.agent, namespace: plan.namespace, labels: plan.selectorLabels },
    spec: {
      selector: { matchLabels: plan.selectorLabels },
      updateStrategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels: plan.selectorLabels },
        spec: {
          serviceAccountName: plan.agent,
          // lvm must run in the host's namespaces (its /etc/lvm, udev, lock files): the agent runs it
          // through HOST_COMMAND_PREFIX (nsenter --target 1), which needs the host's PID 1 visible.
          hostPID: true,
          nodeSelector: args.nodeSelector ?? { "kubernetes.io/os": "linux" },
          tolerations: args.tolerations ?? [],
          ...(args.priorityClassName ? { priorityClassName: args.priorityClassName } : {}),
          // A stopping agent finishes the step it is in (an lvm command is not interrupted).
          terminationGracePeriodSeconds: 120,
          containers: [
            {
              name: "agent",
              image: args.agentImage ?? DEFAULT_IMAGE,
              imagePullPolicy: args.agentImagePullPolicy ?? "IfNotPresent",
              command: args.agentCommand ?? ["pulumi-lvm", "agent"],
              args: agentFlags(plan, args),
              env: [
                { name: "NODE_NAME", valueFrom: { fieldRef: { fieldPath: "spec.nodeName" } } },
                { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
              ],
              ports: [{ name: "http", containerPort: port, protocol: "TCP" }],
              // Privileged, with justification: pvcreate/vgcreate/lvcreate open arbitrary block
              // devices (including disks hot-plugged after the pod started, which a device cgroup
              // allow-list cannot name in advance), issue device-mapper ioctls and need CAP_SYS_ADMIN
              // to enter the host's mount namespace. No narrower securityContext allows all of that.
              securityContext: { privileged: true, runAsUser: 0 },
              // Until the agent first answers, only the startup probe counts: up to 5 minutes, so a
              // slow or loaded node is not killed in a loop before node has loaded the agent (the
              // liveness probe alone allowed 60 s; under qemu TCG the start took longer).
              startupProbe: {
                httpGet: { path: "/healthz", port: "http", scheme: tls ? "HTTPS" : "HTTP" },
                periodSeconds: 5,
                timeoutSeconds: 5,
                failureThreshold: 60,
              },
              livenessProbe: {
                httpGet: { path: "/healthz", port: "http", scheme: tls ? "HTTPS" : "HTTP" },
                periodSeconds: 10,
                timeoutSeconds: 5,
                failureThreshold: 6,
              },
              readinessProbe: {
                httpGet: { path: "/readyz", port: "http", scheme: tls ? "HTTPS" : "HTTP" },
                periodSeconds: 5,
                timeoutSeconds: 5,
                failureThreshold: 3,
              },
              resources: args.agentResources ?? {
                requests: { cpu: "20m", memory: "64Mi" },
                limits: { memory: "256Mi" },
              },
              volumeMounts: [
                { name: "dev", mountPath: "/dev", mountPropagation: "HostToContainer" },
                { name: "run-topolvm", mountPath: "/run/topolvm" },
                { name: "etc-topolvm", mountPath: "/etc/topolvm" },
                { name: "state", mountPath: AGENT_STATE_DIR },
                ...(tls ? [{ name: "tls", mountPath: TLS_DIR, readOnly: true }] : []),
              ],
            },
          ],
          volumes: [
            // Live device nodes, including disks that appear after the pod started.
            hostPath("dev", "/dev", "Directory"),
            // lvmd's socket, shared with TopoLVM.
            hostPath("run-topolvm", "/run/topolvm", "DirectoryOrCreate"),
            // lvmd.yaml, written by the agent from the plan.
            hostPath("etc-topolvm", "/etc/topolvm", "DirectoryOrCreate"),
            hostPath("state", AGENT_STATE_DIR, "DirectoryOrCreate"),
            ...(tls ? [{ name: "tls", secret: { secretName: tls } }] : []),
          ],
        },
      },
    },
  };
}

/**
 * The agent's flags (src/agent/config.ts): serve on the pod network, check callers' access to
 * LVMNodes in this namespace, run lvm in the host's namespaces, keep state on the host.
 */
export function agentFlags(plan: SystemPlan, args: LvmSystemArgs): string[] {
  const tls = args.agentTlsSecretName
    ? ["--tls-cert", `${TLS_DIR}/tls.crt`, "--tls-key", `${TLS_DIR}/tls.key`]
    : ["--allow-plain-http"];
  return [
    "--listen",
    `0.0.0.0:${args.agentPort ?? DEFAULT_AGENT_PORT}`,
    ...tls,
    "--namespace",
    plan.namespace,
    "--command-prefix",
    HOST_COMMAND_PREFIX,
    "--state-dir",
    `${AGENT_STATE_DIR}/agent`,
    "--lvmd-config",
    "/etc/topolvm/lvmd.yaml",
    ...(args.agentArgs ?? []),
  ];
}
