import { API_GROUP } from "../api";
import { issuanceRules, type OperatorIssuance } from "./certificate-settings";
import {
  clusterRoleBinding,
  clusterRoleManifest,
  roleBinding,
  roleManifest,
  serviceAccountManifest,
} from "./system-rbac";

/** Who the operator is: its name (ServiceAccount, roles, bindings), namespace and what it issues. */
export interface OperatorIdentity {
  readonly name: string;
  readonly namespace: string;
  /** The serving certificates it issues (operator-issuance.ts); undefined: none. */
  readonly issuance?: OperatorIssuance;
}

/**
 * The operator's ServiceAccount, its Role and RoleBinding in the namespace (operatorRules nodeSets,
 * agentPods, leaderElection, events, its token rule, what issuing certificates takes there), its
 * ClusterRole and binding (clusterWide, and the webhook configuration's caBundle when it issues it).
 */
export function operatorAccessManifests(at: OperatorIdentity) {
  const rules = operatorRules();
  const issuance = at.issuance ? issuanceRules(at.issuance) : { namespaced: [], clusterWide: [] };
  return {
    serviceAccount: serviceAccountManifest(at.name, at.namespace),
    role: roleManifest(at.name, at.namespace, [
      ...rules.nodeSets,
      ...rules.agentPods,
      ...rules.leaderElection,
      ...rules.events,
      ...operatorTokenRules(at.name),
      ...issuance.namespaced,
    ]),
    binding: roleBinding(at.name, at.namespace, "Role", at.name),
    clusterRole: clusterRoleManifest(at.name, [...rules.clusterWide, ...issuance.clusterWide]),
    clusterBinding: clusterRoleBinding(at.name, at.name, at.namespace, at.name),
  };
}

/**
 * The operator's least privilege (docs/operator.md, "RBAC"), in three parts so that a single-namespace
 * deployment (LvmSystem: a Role) and an all-namespaces one (a ClusterRole) use the same rules:
 * - `nodeSets`: reconcile LVMNodeSets into LVMNodes and write both statuses. `update` on lvmnodes
 *   is never used against the API server: it is what the agents' SubjectAccessReview asks of a caller
 *   (src/agent/auth/authorizer.ts REQUIRED_ACCESS).
 * - `agentPods`: find each node's agent pod, in the agents' namespace.
 * - `clusterWide`: Nodes, to evaluate node selectors; the classes of sets applied without Pulumi;
 *   TopoLVM's CSIDriver and CSINodes (ProviderReady, which LvmSystem's operator reports); TopoLVM's
 *   LogicalVolumes and PersistentVolumes, read by the admission webhook on a set's deletion.
 * - `leaderElection`: the Lease the replicas elect a leader on (src/operator/leader), in the
 *   operator's own namespace (`create` cannot be limited to one name).
 * - `events`: Events (events.k8s.io/v1) about the LVMNodeSets and LVMNodes.
 * Plus `operatorTokenRules`: a token per node for its own service account. Nothing else: the agents
 * are called at their pod IPs (no pods/proxy).
 */
export function operatorRules() {
  return {
    nodeSets: [
      { apiGroups: [API_GROUP], resources: ["lvmnodesets"], verbs: ["get", "list", "watch", "patch"] },
      { apiGroups: [API_GROUP], resources: ["lvmnodesets/status"], verbs: ["patch"] },
      // blockOwnerDeletion on the LVMNodes' owner references, where OwnerReferencesPermissionEnforcement is on
      { apiGroups: [API_GROUP], resources: ["lvmnodesets/finalizers"], verbs: ["update"] },
      {
        apiGroups: [API_GROUP],
        resources: ["lvmnodes"],
        verbs: ["get", "list", "watch", "create", "patch", "delete", "update"],
      },
      { apiGroups: [API_GROUP], resources: ["lvmnodes/status"], verbs: ["patch"] },
    ],
    agentPods: [{ apiGroups: [""], resources: ["pods"], verbs: ["list", "watch"] }],
    clusterWide: [
      { apiGroups: [""], resources: ["nodes"], verbs: ["list", "watch"] },
      // the classes of sets applied without Pulumi: created when missing, never changed (nodeset/classes.ts)
      { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "create"] },
      {
        apiGroups: ["snapshot.storage.k8s.io"],
        resources: ["volumesnapshotclasses"],
        verbs: ["get", "create"],
      },
      // ProviderReady (--provider-ready): TopoLVM's CSIDriver and the nodes' CSINodes, read only
      { apiGroups: ["storage.k8s.io"], resources: ["csidrivers"], verbs: ["get"] },
      { apiGroups: ["storage.k8s.io"], resources: ["csinodes"], verbs: ["list"] },
      // admission: deleting a set with deletionPolicy Delete is refused while TopoLVM's volumes are
      // in its volume groups (src/operator/admission/in-use.ts), naming their PersistentVolumes
      { apiGroups: ["topolvm.io"], resources: ["logicalvolumes"], verbs: ["list"] },
      { apiGroups: [""], resources: ["persistentvolumes"], verbs: ["get"] },
      // admission: an approval is given only by a caller allowed the verb approve on lvmnodes
      // (src/operator/admission/approvals.ts asks the API server)
      { apiGroups: ["authorization.k8s.io"], resources: ["subjectaccessreviews"], verbs: ["create"] },
    ],
    leaderElection: [
      { apiGroups: ["coordination.k8s.io"], resources: ["leases"], verbs: ["get", "create", "patch"] },
    ],
    // Events about LVMNodeSets and LVMNodes, in their namespace; patch: a repeated event's series count.
    events: [{ apiGroups: ["events.k8s.io"], resources: ["events"], verbs: ["create", "patch"] }],
  };
}

/**
 * The operator's tokens for the agents: `create` on its own service account's `token` subresource
 * only (a TokenRequest per node, audience pulumi-lvm-agent/<node>; src/operator/agents/token-request.ts).
 * A Role in the service account's namespace.
 */
export function operatorTokenRules(serviceAccount: string) {
  return [
    {
      apiGroups: [""],
      resources: ["serviceaccounts/token"],
      resourceNames: [serviceAccount],
      verbs: ["create"],
    },
  ];
}
