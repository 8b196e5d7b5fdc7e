import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { API_GROUP, APPROVER_CLUSTER_ROLE } from "../api";
import type { Subject } from "./lvm-system-args";
import type { SystemPlan } from "./system-plan";

/*
 * LvmSystem's RBAC besides each workload's own: the provisioner service account whose calls the
 * agents accept, and the least-privilege roles NodeSet cluster mode needs of whoever runs `pulumi up`.
 */

/** Where the objects go and what they wait for. */
interface RbacContext {
  readonly parent: pulumi.Resource;
  readonly namespace: k8s.core.v1.Namespace;
}

/** The provisioner's ServiceAccount, its Role (provisionerRules) and RoleBinding. */
export function provisionerManifests(plan: SystemPlan) {
  return {
    serviceAccount: serviceAccountManifest(plan.provisioner, plan.namespace),
    role: roleManifest(plan.provisioner, plan.namespace, provisionerRules()),
    binding: roleBinding(plan.provisioner, plan.namespace, "Role", plan.provisioner),
  };
}

/** provisionerManifests' objects as resources. */
export function provisionerAccess(m: ReturnType<typeof provisionerManifests>, at: RbacContext) {
  const { parent, namespace: ns } = at;
  const inNamespace = { parent, dependsOn: [ns] };
  const serviceAccount = new k8s.core.v1.ServiceAccount(
    m.serviceAccount.metadata.name,
    m.serviceAccount,
    inNamespace,
  );
  const role = new k8s.rbac.v1.Role(m.role.metadata.name, m.role, inNamespace);
  new k8s.rbac.v1.RoleBinding(m.binding.metadata.name, m.binding, {
    parent,
    dependsOn: [ns, role, serviceAccount],
  });
  return { serviceAccount };
}

/** The cluster-mode Role and ClusterRole (clusterModeRules), bound to `subjects` when there are any. */
export function clusterModeManifests(plan: SystemPlan, subjects: readonly Subject[]) {
  const rules = clusterModeRules(plan.provisioner);
  const bound = subjects.map((s) => ({
    kind: s.kind,
    name: s.name,
    ...(s.kind === "ServiceAccount" ? { namespace: s.namespace ?? plan.namespace } : {}),
    ...(s.kind === "ServiceAccount" ? {} : { apiGroup: "rbac.authorization.k8s.io" }),
  }));
  const roleRef = (kind: "Role" | "ClusterRole") => ({
    apiGroup: "rbac.authorization.k8s.io",
    kind,
    name: plan.clusterMode,
  });
  return {
    role: roleManifest(plan.clusterMode, plan.namespace, rules.namespaced),
    clusterRole: clusterRoleManifest(plan.clusterMode, rules.clusterWide),
    ...(bound.length
      ? {
          binding: {
            apiVersion: RBAC_API,
            kind: "RoleBinding" as const,
            metadata: { name: plan.clusterMode, namespace: plan.namespace },
            roleRef: roleRef("Role"),
            subjects: bound,
          },
          clusterBinding: {
            apiVersion: RBAC_API,
            kind: "ClusterRoleBinding" as const,
            metadata: { name: plan.clusterMode },
            roleRef: roleRef("ClusterRole"),
            subjects: bound,
          },
        }
      : {}),
  };
}

/** clusterModeManifests' objects as resources. */
export function clusterModeAccess(m: ReturnType<typeof clusterModeManifests>, at: RbacContext) {
  const { parent, namespace: ns } = at;
  const role = new k8s.rbac.v1.Role(m.role.metadata.name, m.role, { parent, dependsOn: [ns] });
  const clusterRole = new k8s.rbac.v1.ClusterRole(m.clusterRole.metadata.name, m.clusterRole, { parent });
  if (m.binding)
    new k8s.rbac.v1.RoleBinding(m.binding.metadata.name, m.binding, { parent, dependsOn: [ns, role] });
  if (m.clusterBinding)
    new k8s.rbac.v1.ClusterRoleBinding(m.clusterBinding.metadata.name, m.clusterBinding, {
      parent,
      dependsOn: [clusterRole],
    });
  return { role, clusterRole };
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

const RBAC_API = "rbac.authorization.k8s.io/v1" as const;

/** A policy rule (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface Rule {
  readonly apiGroups: string[];
  readonly resources: string[];
  readonly resourceNames?: string[];
  readonly verbs: string[];
}

export function serviceAccountManifest(name: string, namespace: string) {
  return { apiVersion: "v1" as const, kind: "ServiceAccount" as const, metadata: { name, namespace } };
}

export function roleManifest(name: string, namespace: string, rules: Rule[]) {
  return { apiVersion: RBAC_API, kind: "Role" as const, metadata: { name, namespace }, rules };
}

export function clusterRoleManifest(name: string, rules: Rule[]) {
  return { apiVersion: RBAC_API, kind: "ClusterRole" as const, metadata: { name }, rules };
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

/** A RoleBinding named after the service account, of `role` to it. */
export function roleBinding(
  serviceAccount: string,
  namespace: string,
  kind: "Role" | "ClusterRole",
  role: string,
) {
  return {
    apiVersion: RBAC_API,
    kind: "RoleBinding" as const,
    metadata: { name: serviceAccount, namespace },
    ...roleBindingBody(serviceAccount, namespace, kind, role),
  };
}

/** A ClusterRoleBinding `name` of the ClusterRole `role` to the service account. */
export function clusterRoleBinding(name: string, serviceAccount: string, namespace: string, role: string) {
  return {
    apiVersion: RBAC_API,
    kind: "ClusterRoleBinding" as const,
    metadata: { name },
    ...roleBindingBody(serviceAccount, namespace, "ClusterRole", role),
  };
}

/**
 * The ClusterRole `pulumi-lvm-approver` (docs/operator.md, Reviewed changes): the verb `approve` on
 * lvmnodes, which the operator's webhook asks of whoever sets the approval annotation, and what
 * giving one takes (reading LVMNodes, patching their metadata). Aggregated to `admin` only, not to
 * `edit`: approving a plan that wipes a disk or removes a volume group is an act on the node's
 * storage, which a namespace's administrators are trusted with and its editors are not.
 */
export function approverClusterRole() {
  return {
    apiVersion: RBAC_API,
    kind: "ClusterRole" as const,
    metadata: {
      name: APPROVER_CLUSTER_ROLE,
      labels: { "rbac.authorization.k8s.io/aggregate-to-admin": "true" },
    },
    rules: [
      {
        apiGroups: [API_GROUP],
        resources: ["lvmnodes"],
        verbs: ["approve", "get", "list", "watch", "patch"],
      },
    ],
  };
}

/**
 * The approver ClusterRole (approverClusterRole) as a resource. One per cluster: a second LvmSystem
 * in the same cluster fails on it being there already (not handled yet).
 */
export function approverAccess(
  name: string,
  manifest: ReturnType<typeof approverClusterRole>,
  at: Pick<RbacContext, "parent">,
) {
  return new k8s.rbac.v1.ClusterRole(`${name}-approver`, manifest, { parent: at.parent });
}
