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
export function provisionerAccess(plan: SystemPlan, at: RbacContext) {
  const { parent, namespace: ns } = at;
  const inNamespace = { parent, dependsOn: [ns] };
  const serviceAccount = new k8s.core.v1.ServiceAccount(
    plan.provisioner,
    { metadata: { name: plan.provisioner, namespace: plan.namespace } },
    inNamespace,
  );
  const role = new k8s.rbac.v1.Role(
    plan.provisioner,
    { metadata: { name: plan.provisioner, namespace: plan.namespace }, rules: provisionerRules() },
    inNamespace,
  );
  new k8s.rbac.v1.RoleBinding(
    plan.provisioner,
    roleBinding(plan.provisioner, plan.namespace, "Role", plan.provisioner),
    { parent, dependsOn: [ns, role, serviceAccount] },
  );
  return { serviceAccount };
}

/** The cluster-mode Role and ClusterRole (clusterModeRules), bound to `subjects` when there are any. */
export function clusterModeAccess(plan: SystemPlan, subjects: readonly Subject[], at: RbacContext) {
  const { parent, namespace: ns } = at;
  const rules = clusterModeRules(plan.provisioner);
  const role = new k8s.rbac.v1.Role(
    plan.clusterMode,
    { metadata: { name: plan.clusterMode, namespace: plan.namespace }, rules: rules.namespaced },
    { parent, dependsOn: [ns] },
  );
  const clusterRole = new k8s.rbac.v1.ClusterRole(
    plan.clusterMode,
    { metadata: { name: plan.clusterMode }, rules: rules.clusterWide },
    { parent },
  );
  const bound = subjects.map((s) => ({
    kind: s.kind,
    name: s.name,
    ...(s.kind === "ServiceAccount" ? { namespace: s.namespace ?? plan.namespace } : {}),
    ...(s.kind === "ServiceAccount" ? {} : { apiGroup: "rbac.authorization.k8s.io" }),
  }));
  if (bound.length) {
    new k8s.rbac.v1.RoleBinding(
      plan.clusterMode,
      {
        metadata: { name: plan.clusterMode, namespace: plan.namespace },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: plan.clusterMode },
        subjects: bound,
      },
      { parent, dependsOn: [ns, role] },
    );
    new k8s.rbac.v1.ClusterRoleBinding(
      plan.clusterMode,
      {
        metadata: { name: plan.clusterMode },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: plan.clusterMode },
        subjects: bound,
      },
      { parent, dependsOn: [clusterRole] },
    );
  }
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

export function roleBindingBody(
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

export function roleBinding(
  serviceAccount: string,
  namespace: string,
  kind: "Role" | "ClusterRole",
  role: string,
) {
  return {
    metadata: { name: serviceAccount, namespace },
    ...roleBindingBody(serviceAccount, namespace, kind, role),
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
 * The approver ClusterRole (approverClusterRole). One per cluster: a second LvmSystem in the same
 * cluster fails on it being there already (not handled yet).
 */
export function approverAccess(name: string, at: RbacContext) {
  return new k8s.rbac.v1.ClusterRole(`${name}-approver`, approverClusterRole(), { parent: at.parent });
}
