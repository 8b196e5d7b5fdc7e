import { API_GROUP, APPROVE_ANNOTATION, APPROVER_CLUSTER_ROLE } from "../../api";
import type { LVMNodeObject } from "../types";
import type { AdmissionRequest, AdmissionVerdict, RequestUser } from "./review";

/** May `user` approve plans of the LVMNode `namespace`/`name` (a SubjectAccessReview)? */
export type ApproveAccess = (user: RequestUser, namespace: string, name: string) => Promise<boolean>;

/**
 * The verdict on setting or changing an LVMNode's approval annotation (docs/operator.md, Reviewed
 * changes), like Kubernetes' certificate approvals: only a caller allowed the verb `approve` on
 * `lvmnodes` may give one (403 naming the ClusterRole that grants it), and an approval naming
 * another plan than the one the LVMNode shows waiting is refused with that plan's hash. Removing
 * the annotation is always allowed.
 */
export async function reviewApproval(
  request: AdmissionRequest,
  canApprove: ApproveAccess,
): Promise<AdmissionVerdict> {
  const node = request.object as LVMNodeObject | undefined;
  const hash = node?.metadata?.annotations?.[APPROVE_ANNOTATION];
  if (hash === undefined) return { allowed: true };
  const namespace = node?.metadata?.namespace ?? request.namespace ?? "";
  const name = node?.metadata?.name ?? request.name ?? "";
  const user = request.userInfo ?? {};
  if (!(await canApprove(user, namespace, name)))
    return {
      allowed: false,
      code: 403,
      message: `LVMNode ${namespace}/${name}: ${user.username ?? "this user"} may not approve its plans: ${APPROVE_ANNOTATION} needs the verb approve on lvmnodes (group ${API_GROUP}); an administrator grants it with the ClusterRole ${APPROVER_CLUSTER_ROLE} (aggregated to admin)`,
    };
  const pending = node?.status?.pendingApproval?.hash;
  if (pending && pending !== hash.trim())
    return {
      allowed: false,
      code: 409,
      message: `LVMNode ${namespace}/${name}: the approval ${hash} is stale: the plan waiting now is ${pending}; review it (kubectl get lvmnode -n ${namespace} ${name} -o yaml, status.pendingApproval) and approve that hash`,
    };
  return { allowed: true };
}

/** The SubjectAccessReview body for `user` approving plans of one LVMNode. */
export function approveAccessReview(user: RequestUser, namespace: string, name: string) {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      ...(user.username ? { user: user.username } : {}),
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.groups ? { groups: [...user.groups] } : {}),
      ...(user.extra ? { extra: user.extra } : {}),
      resourceAttributes: { group: API_GROUP, resource: "lvmnodes", verb: "approve", namespace, name },
    },
  };
}
