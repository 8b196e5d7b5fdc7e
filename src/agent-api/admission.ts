import { API_GROUP } from "../api";

/**
 * The admission objects (docs/operator.md, Admission), as plain manifests: the contract between the
 * operator's webhook server (src/operator/admission) and whoever deploys it — LvmSystem creates them
 * (src/components/admission.ts) and the tests apply the very same ones to a real API server.
 *
 * - A ValidatingAdmissionPolicy (CEL, evaluated inside the API server, nothing to be down): an
 *   LVMNode is controlled by an LVMNodeSet, unless the operator itself writes it.
 * - A ValidatingWebhookConfiguration for what CEL cannot see: other objects (an LVMNodeSet whose
 *   Nodes another set selects; the set an LVMNode names as its controller) and the API rules the
 *   CRDs' CEL cannot express (checked by the same function as `pulumi-lvm validate`).
 */

/** Where LvmSystem mounts the webhook's serving certificate (a kubernetes.io/tls Secret): the operator's --webhook-cert-dir default. */
export const DEFAULT_WEBHOOK_CERT_DIR = "/var/run/secrets/pulumi-lvm/webhook-tls";

/** The webhook server's paths (src/operator/admission/server.ts). */
export const WEBHOOK_PATHS = {
  nodeSets: "/validate/lvmnodesets",
  lvmNodes: "/validate/lvmnodes",
  approvals: "/validate/lvmnode-approvals",
} as const;

/** The webhook on giving an approval (the annotation lvm.topolvm.io/approve set or changed): `lvmnode-approvals.lvm.topolvm.io`. */
export const LVMNODE_APPROVALS = "lvmnode-approvals";

/** The approval annotation set or changed (CEL; a create counts). */
const APPROVAL_WRITTEN = (() => {
  const key = "'lvm.topolvm.io/approve'";
  const has = (o: string) => `has(${o}.metadata.annotations) && ${key} in ${o}.metadata.annotations`;
  return `(${has("object")}) && (request.operation == 'CREATE' || !(${has("oldObject")}) || oldObject.metadata.annotations[${key}] != object.metadata.annotations[${key}])`;
})();

/** The webhook on deleting LVMNodeSets: `lvmnodeset-deletions.lvm.topolvm.io` (path WEBHOOK_PATHS.nodeSets). */
export const NODE_SET_DELETIONS = "lvmnodeset-deletions";

/** The webhook on deleting deletion guards: `deletion-guards.lvm.topolvm.io` (path WEBHOOK_PATHS.nodeSets). */
export const DELETION_GUARDS = "deletion-guards";

/** The label that makes a ConfigMap a deletion guard (deletionGuard). */
export const DELETION_GUARD_LABEL = "lvm.topolvm.io/deletion-guard";

/** The annotation that says, on the guard itself, what it is and how to let it go (deletionGuard). */
export const DELETION_GUARD_DESCRIPTION = "lvm.topolvm.io/description";

const DELETION_GUARD_HELP =
  "pulumi-lvm deletion guard: the operator's webhook refuses to delete it while the LVMNodeSets in data.nodeSets (deletionPolicy Delete) still hold TopoLVM volumes, so TopoLVM stays to remove them once their PVCs are deleted. With no operator left to answer, remove the label lvm.topolvm.io/deletion-guard, then delete it.";

/**
 * A deletion guard: a ConfigMap listing LVMNodeSets of its namespace (data.nodeSets, one name a
 * line) whose deletion would be refused (volumes in their volume groups, deletionPolicy Delete).
 * Deleting it is refused for the same reason, by the same webhook (failurePolicy Fail: a webhook
 * that does not answer in time refuses too). The Topolvm component makes one that depends on
 * TopoLVM's chart, so `pulumi destroy` deletes it first and stops there, before TopoLVM is gone:
 * TopoLVM is what removes a volume once its PVC is deleted. To let it go unchecked (no operator will
 * answer again), remove its label: the webhook's objectSelector no longer matches.
 */
export function deletionGuard(o: { name: string; namespace: string; nodeSets: readonly string[] }) {
  return {
    apiVersion: "v1" as const,
    kind: "ConfigMap" as const,
    metadata: {
      name: o.name,
      namespace: o.namespace,
      labels: { [DELETION_GUARD_LABEL]: "true" },
      // What a person finds when the guard's deletion fails with no operator to answer.
      annotations: { [DELETION_GUARD_DESCRIPTION]: DELETION_GUARD_HELP },
    },
    data: { nodeSets: o.nodeSets.join("\n") },
  };
}

/** The LVMNodeSet names a deletion guard lists. */
export function guardedNodeSets(guard: unknown): string[] {
  const text = (guard as { data?: { nodeSets?: unknown } } | undefined)?.data?.nodeSets;
  return typeof text === "string" ? text.split(/\s+/).filter(Boolean) : [];
}

/** The ValidatingAdmissionPolicy's message for an LVMNode nobody's LVMNodeSet controls. */
export const NOT_CONTROLLED_MESSAGE =
  "metadata.ownerReferences: an LVMNode must be controlled by an LVMNodeSet (an ownerReference with kind LVMNodeSet and controller: true); the operator creates LVMNodes from LVMNodeSets, create or change an LVMNodeSet instead";

/**
 * Who may create an LVMNode or change its spec or ownerReferences: the operator alone (the
 * ValidatingAdmissionPolicy's message, and the webhook's for the same writes).
 */
export const LVMNODE_WRITERS_MESSAGE =
  "LVMNodes are created, and their spec and ownerReferences changed, only by the pulumi-lvm operator, from an LVMNodeSet's template for each node it selects; create or change an LVMNodeSet instead (labels, annotations and finalizers may still be changed)";

/**
 * Writers that may leave an LVMNode without a controller: the garbage collector removes
 * ownerReferences when a set is deleted with propagationPolicy Orphan (as its own service account
 * with --use-service-account-credentials, else as kube-controller-manager).
 */
export const GARBAGE_COLLECTORS = [
  "system:serviceaccount:kube-system:generic-garbage-collector",
  "system:kube-controller-manager",
] as const;

/** "system:serviceaccount:<namespace>:<name>": how the API server names a service account's requests. */
export function serviceAccountUsername(namespace: string, name: string): string {
  return `system:serviceaccount:${namespace}:${name}`;
}

/** A CEL string literal (single quotes; the names here never hold a quote or backslash). */
function celString(text: string): string {
  if (/['\\]/.test(text)) throw new Error(`cannot quote ${JSON.stringify(text)} in CEL`);
  return `'${text}'`;
}

/** `o`'s ownerReferences, or an empty list (CEL has no absent-equals-empty). */
const ownerReferencesOf = (o: string) =>
  `(has(${o}.metadata.ownerReferences) ? ${o}.metadata.ownerReferences : [])`;

/** A create, or an update that changes the spec or the ownerReferences. */
const SPEC_OR_OWNERS_WRITTEN = `request.operation == 'CREATE' || object.spec != oldObject.spec || ${ownerReferencesOf("object")} != ${ownerReferencesOf("oldObject")}`;

const controlledBySet = (o: string) =>
  `has(${o}.metadata.ownerReferences) && ${o}.metadata.ownerReferences.exists(r, r.kind == 'LVMNodeSet' && r.apiVersion.startsWith('${API_GROUP}/') && has(r.controller) && r.controller)`;

export interface PolicyOptions {
  /** The name of the policy and its binding. @example "pulumi-lvm-lvmnode-owner" */
  readonly name: string;
  /** The operator's user name (serviceAccountUsername of its service account). */
  readonly operatorUsername: string;
  /**
   * Only LVMNodes in this namespace (the operator's own, with LvmSystem: two systems in one
   * cluster must not refuse each other's operator). @default every namespace
   */
  readonly namespace?: string;
}

/**
 * The ValidatingAdmissionPolicy and its binding (validationActions Deny), for anyone but the
 * operator and the garbage collector: creating or updating an LVMNode that no LVMNodeSet controls
 * is refused; and creating one, or changing its spec or ownerReferences, is refused outright
 * (LVMNODE_WRITERS_MESSAGE): a genuine controller reference is no mandate, the operator alone
 * writes a set's template to the nodes it selects. Labels, annotations and finalizers may be
 * changed (an LVMNode that already had no controller, made before the policy existed, too); the
 * garbage collector may orphan LVMNodes. failurePolicy Fail: an expression that cannot be
 * evaluated refuses.
 */
export function lvmNodeOwnerPolicy(o: PolicyOptions) {
  const exempt = [o.operatorUsername, ...GARBAGE_COLLECTORS].map(celString).join(", ");
  const policy = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicy",
    metadata: { name: o.name },
    spec: {
      failurePolicy: "Fail",
      matchConstraints: {
        resourceRules: [
          {
            apiGroups: [API_GROUP],
            apiVersions: ["*"],
            operations: ["CREATE", "UPDATE"],
            resources: ["lvmnodes"],
          },
        ],
      },
      matchConditions: [
        { name: "not-the-operator", expression: `!(request.userInfo.username in [${exempt}])` },
      ],
      validations: [
        {
          expression: `(${controlledBySet("object")}) || (request.operation == 'UPDATE' && !(${controlledBySet("oldObject")}))`,
          message: NOT_CONTROLLED_MESSAGE,
          reason: "Forbidden",
        },
        { expression: `!(${SPEC_OR_OWNERS_WRITTEN})`, message: LVMNODE_WRITERS_MESSAGE, reason: "Forbidden" },
      ],
    },
  };
  const binding = {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingAdmissionPolicyBinding",
    metadata: { name: o.name },
    spec: {
      policyName: o.name,
      validationActions: ["Deny"],
      ...(o.namespace
        ? {
            matchResources: {
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": o.namespace } },
            },
          }
        : {}),
    },
  };
  return { policy, binding };
}

/** Where the API server reaches the webhook: the operator's Service, or a URL (tests, out-of-cluster). */
export type WebhookClientConfig =
  | { readonly service: { readonly namespace: string; readonly name: string; readonly port: number } }
  | { readonly url: string };

export interface WebhookOptions {
  /** The configuration's name. @example "pulumi-lvm-operator" */
  readonly name: string;
  /** The base: each webhook appends its path (WEBHOOK_PATHS). */
  readonly clientConfig: WebhookClientConfig;
  /** PEM of the CA of the webhook's serving certificate; absent: set by cert-manager's CA injector. */
  readonly caBundle?: string;
  readonly operatorUsername: string;
  /** Only objects in this namespace (the operator's own, with LvmSystem). @default every namespace */
  readonly namespace?: string;
  /** @default 5 */
  readonly timeoutSeconds?: number;
  /** e.g. cert-manager.io/inject-ca-from. */
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * The ValidatingWebhookConfiguration: one webhook per kind, called for a create or a spec change
 * (of an LVMNode also an ownerReferences change) by anyone but the operator (and, for LVMNodes, the
 * garbage collector, which orphans them) — matchConditions: a finalizer, label or status change by
 * a person, or the operator's own writes, never wait for the webhook. failurePolicy Fail: while no operator
 * answers, sets cannot be created or their spec changed (nothing would reconcile them anyway), but
 * deletions and finalizer removals still pass (docs/operator.md). A third, failurePolicy Ignore:
 * deleting a set whose deletionPolicy is Delete (the API server checks that, matchConditions; a
 * Retain set never reaches the webhook), refused while its volume groups hold TopoLVM volumes. A
 * fourth, failurePolicy Fail: deleting a deletion guard (deletionGuard), the same check.
 */
export function webhookConfiguration(o: WebhookOptions) {
  const exempt = (users: readonly string[]) =>
    users.length === 1
      ? `request.userInfo.username != ${celString(users[0]!)}`
      : `!(request.userInfo.username in [${users.map(celString).join(", ")}])`;
  const clientConfigFor = (path: string) => ({
    ...("url" in o.clientConfig
      ? { url: `${o.clientConfig.url.replace(/\/$/, "")}${path}` }
      : { service: { ...o.clientConfig.service, path } }),
    ...(o.caBundle ? { caBundle: Buffer.from(o.caBundle).toString("base64") } : {}),
  });
  const webhook = (plural: "lvmnodesets" | "lvmnodes", path: string) => ({
    name: `${plural}.${API_GROUP}`,
    admissionReviewVersions: ["v1"],
    sideEffects: "None",
    failurePolicy: "Fail",
    matchPolicy: "Equivalent",
    timeoutSeconds: o.timeoutSeconds ?? 5,
    clientConfig: clientConfigFor(path),
    rules: [
      {
        apiGroups: [API_GROUP],
        apiVersions: ["*"],
        operations: ["CREATE", "UPDATE"],
        resources: [plural],
        scope: "Namespaced",
      },
    ],
    ...(o.namespace
      ? { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": o.namespace } } }
      : {}),
    matchConditions: [
      plural === "lvmnodes"
        ? { name: "spec-or-owners-written", expression: SPEC_OR_OWNERS_WRITTEN }
        : {
            name: "spec-written",
            expression: "request.operation == 'CREATE' || object.spec != oldObject.spec",
          },
      {
        name: "not-the-operator",
        expression: exempt(
          plural === "lvmnodes" ? [o.operatorUsername, ...GARBAGE_COLLECTORS] : [o.operatorUsername],
        ),
      },
    ],
  });
  const nodeSets = webhook("lvmnodesets", WEBHOOK_PATHS.nodeSets);
  const lvmNodes = webhook("lvmnodes", WEBHOOK_PATHS.lvmNodes);
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name: o.name, ...(o.annotations ? { annotations: { ...o.annotations } } : {}) },
    webhooks: [
      nodeSets,
      lvmNodes,
      // Deleting a set with deletionPolicy Delete while its volume groups hold volumes (docs/operator.md,
      // Admission): Ignore, so a set stays deletable with no operator answering; the finalizer and
      // the agents' refusal to remove a volume group that holds volumes are the safety net then.
      {
        ...nodeSets,
        name: `${NODE_SET_DELETIONS}.${API_GROUP}`,
        failurePolicy: "Ignore",
        rules: [{ ...nodeSets.rules[0]!, operations: ["DELETE"] }],
        matchConditions: [
          {
            name: "deletion-policy-delete",
            expression:
              "has(oldObject.spec) && has(oldObject.spec.template) && has(oldObject.spec.template.deletionPolicy) && oldObject.spec.template.deletionPolicy == 'Delete'",
          },
          nodeSets.matchConditions[1]!,
        ],
      },
      // Deleting a deletion guard (deletionGuard): the same check for the sets it lists. Fail, unlike
      // the set's: passed unchecked, destroy would go on to delete TopoLVM, and nothing would remove
      // a volume once its PVC is deleted (the set Terminating for good). On an emulated node the
      // webhook missed its 10 s and Ignore let exactly that through. Its label is the way out.
      {
        ...nodeSets,
        name: `${DELETION_GUARDS}.${API_GROUP}`,
        failurePolicy: "Fail",
        rules: [
          {
            apiGroups: [""],
            apiVersions: ["v1"],
            operations: ["DELETE"],
            resources: ["configmaps"],
            scope: "Namespaced",
          },
        ],
        objectSelector: { matchLabels: { [DELETION_GUARD_LABEL]: "true" } },
        matchConditions: [nodeSets.matchConditions[1]!],
      },
      // An approval (docs/operator.md, Reviewed changes): only callers allowed the verb approve on
      // lvmnodes (a SubjectAccessReview), and never for another plan than the one waiting. Fail:
      // with no operator to answer, nothing could apply the plan anyway.
      {
        ...lvmNodes,
        name: `${LVMNODE_APPROVALS}.${API_GROUP}`,
        clientConfig: clientConfigFor(WEBHOOK_PATHS.approvals),
        matchConditions: [
          { name: "approval-written", expression: APPROVAL_WRITTEN },
          nodeSets.matchConditions[1]!,
        ],
      },
    ],
  };
}
