import { posix } from "node:path";
import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { DEFAULT_AGENT_CA_FILE } from "../agent-api/auth";
import { OPERATOR_POD_LABELS } from "../agent-api/pods";
import type { WorkloadContext } from "./workload-context";
import type { OperatorSettings } from "./lvm-system-args";
import { DEFAULT_WEBHOOK_CERT_DIR } from "../agent-api/admission";
import { admissionManifests, operatorAdmission, WEBHOOK_PORT, webhookTlsSecretName } from "./admission";
import { issuanceFlags, type CertificateSettings } from "./certificate-settings";
import { operatorAccessManifests, type OperatorIdentity } from "./operator-rbac";
import { DEFAULT_OPERATOR_NODE_SELECTOR, operatorAffinity } from "./operator-placement";
import { httpProbes } from "./probes";

export type { OperatorSettings } from "./lvm-system-args";

/** What operatorDeployment needs to know about the system it runs in. */
export interface OperatorPlacement extends OperatorIdentity {
  /** The LvmSystem's namespace: the LVMNodeSets, LVMNodes and agent pods all live there. */
  readonly namespace: string;
  /** Name of its ServiceAccount, Role, ClusterRole, bindings and Deployment. */
  readonly name: string;
  /** The agent's image, the default. */
  readonly agentImage: pulumi.Input<string>;
  readonly imagePullPolicy: string;
  /**
   * The Secret with the agents' CA (`ca.crt`), mounted for the operator (that key only); undefined:
   * the agents serve plain HTTP and the operator is told so (`--agent-allow-plain-http`).
   */
  readonly agentTlsSecret?: string;
  /** The Secret the operator serves its admission webhook with (admission.ts); undefined: no webhook. */
  readonly webhookTlsSecret?: string;
  /** The agents' node selector: the operator prefers other nodes (operator-placement.ts). */
  readonly agentNodeSelector?: Record<string, string>;
  /** LvmSystem's `certificates` (cert-manager's Certificate for the webhook). */
  readonly certificates?: CertificateSettings;
}

/**
 * The operator's objects: its access (operator-rbac.ts), its Deployment and PodDisruptionBudget,
 * and its admission objects unless admission is off (admission.ts).
 */
export function operatorManifests(at: OperatorPlacement, args: OperatorSettings = {}) {
  const webhookTlsSecret = webhookTlsSecretName(at.name, args.admission);
  const placed = { ...at, ...(webhookTlsSecret ? { webhookTlsSecret } : {}) };
  return {
    ...operatorAccessManifests(at),
    deployment: operatorDeployment(placed, args),
    disruptionBudget: operatorDisruptionBudget(at),
    ...(webhookTlsSecret
      ? {
          admission: admissionManifests(
            {
              namespace: at.namespace,
              operator: at.name,
              podLabels: operatorLabels(at.name),
              ...(at.certificates ? { certificates: at.certificates } : {}),
            },
            args.admission ?? {},
          ),
        }
      : {}),
  };
}

/** operatorManifests' objects as resources, the Deployment after the access it needs. */
export function operatorWorkload(m: ReturnType<typeof operatorManifests>, ctx: WorkloadContext) {
  const { parent, namespace: ns } = ctx;
  const inNamespace = { parent, dependsOn: [ns] };
  const name = m.deployment.metadata.name;
  const serviceAccount = new k8s.core.v1.ServiceAccount(name, m.serviceAccount, inNamespace);
  const role = new k8s.rbac.v1.Role(name, m.role, inNamespace);
  const binding = new k8s.rbac.v1.RoleBinding(name, m.binding, {
    parent,
    dependsOn: [ns, role, serviceAccount],
  });
  const clusterRole = new k8s.rbac.v1.ClusterRole(name, m.clusterRole, { parent });
  const clusterBinding = new k8s.rbac.v1.ClusterRoleBinding(name, m.clusterBinding, {
    parent,
    dependsOn: [clusterRole, serviceAccount],
  });
  // After its bindings: an operator started before them is refused its first lists and watches and
  // backs off, which on a slow node costs minutes of `pulumi up` (and a destroy removes it first).
  const deployment = new k8s.apps.v1.Deployment(name, m.deployment, {
    parent,
    dependsOn: [ns, serviceAccount, binding, clusterBinding, ...ctx.crds],
  });
  new k8s.policy.v1.PodDisruptionBudget(name, m.disruptionBudget, inNamespace);
  if (m.admission) operatorAdmission(name, m.admission, deployment, ctx);
  return { deployment };
}

/** Port of /healthz, /readyz and /metrics (the operator's --listen). */
export const OPERATOR_PORT = 8081;
/** Where the agents' CA is mounted: where the operator reads it by default (--agent-ca-file). */
const AGENT_CA_DIR = posix.dirname(DEFAULT_AGENT_CA_FILE);
/** The operator's labels, and its Deployment's selector. */
export const operatorLabels = (instance: string) => ({
  ...OPERATOR_POD_LABELS,
  "app.kubernetes.io/instance": instance,
});

/** Replicas of the operator unless `operator.replicas`: one leads (the Lease), the other stands by to take over. */
export const OPERATOR_REPLICAS = 2;

/**
 * The operator's Deployment: two replicas (`replicas`) electing a leader on a Lease in the namespace
 * (`--leader-elect`; only the leader reconciles, docs/operator.md), replaced one at a time
 * (RollingUpdate, never below the replicas: a new standby is Ready before an old pod stops, and
 * a stopping leader releases the Lease), preferably on two nodes and off the agents' nodes; watching only the system's
 * namespace, requesting a token per node for its own service account and verifying the agents
 * against their CA (the Secret's ca.crt only), and reporting each set's ProviderReady unless
 * `providerReady: false`. It needs no privilege: non-root, read-only root
 * filesystem, no capabilities, RuntimeDefault seccomp.
 */
export function operatorDeployment(at: OperatorPlacement, args: OperatorSettings = {}) {
  const labels = operatorLabels(at.name);
  return {
    apiVersion: "apps/v1" as const,
    kind: "Deployment" as const,
    metadata: { name: at.name, namespace: at.namespace, labels },
    spec: {
      replicas: args.replicas ?? OPERATOR_REPLICAS,
      strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: at.name,
          // Off the agents' nodes where it can be, the replicas on two nodes (operator-placement.ts).
          nodeSelector: args.nodeSelector ?? DEFAULT_OPERATOR_NODE_SELECTOR,
          ...(args.tolerations ? { tolerations: args.tolerations } : {}),
          affinity: operatorAffinity(labels, at.agentNodeSelector, args.affinity),
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65532,
            runAsGroup: 65532,
            seccompProfile: { type: "RuntimeDefault" },
          },
          // A stopping operator finishes the reconcile in progress (an agent apply may take minutes).
          terminationGracePeriodSeconds: 300,
          containers: [
            {
              name: "operator",
              image: args.image ?? at.agentImage,
              imagePullPolicy: at.imagePullPolicy,
              command: args.command ?? ["pulumi-lvm", "operator"],
              args: [
                "--namespace",
                at.namespace,
                "--agent-namespace",
                at.namespace,
                "--listen",
                `0.0.0.0:${OPERATOR_PORT}`,
                "--service-account",
                `${at.namespace}/${at.name}`,
                "--leader-elect",
                "--leader-election-namespace",
                at.namespace,
                "--leader-election-name",
                at.name,
                ...(at.agentTlsSecret ? [] : ["--agent-allow-plain-http"]),
                // ProviderReady: the TopoLVM side of a set's Ready (RBAC: operatorRules().clusterWide)
                ...(args.providerReady === false ? [] : ["--provider-ready"]),
                ...(at.webhookTlsSecret
                  ? [
                      "--webhook-listen",
                      `0.0.0.0:${WEBHOOK_PORT}`,
                      "--webhook-cert-dir",
                      DEFAULT_WEBHOOK_CERT_DIR,
                    ]
                  : []),
                // The serving certificates it issues and renews (src/operator/certificates).
                ...(at.issuance ? issuanceFlags(at.issuance) : []),
                ...(args.args ?? []),
              ],
              ports: [
                { name: "http", containerPort: OPERATOR_PORT, protocol: "TCP" },
                ...(at.webhookTlsSecret
                  ? [{ name: "webhook", containerPort: WEBHOOK_PORT, protocol: "TCP" }]
                  : []),
              ],
              securityContext: {
                allowPrivilegeEscalation: false,
                readOnlyRootFilesystem: true,
                capabilities: { drop: ["ALL"] },
              },
              // As the agent's (probes.ts): a loaded node answers late, it is not wedged.
              ...httpProbes(),
              resources: args.resources ?? {
                requests: { cpu: "20m", memory: "96Mi" },
                limits: { memory: "256Mi" },
              },
              volumeMounts: [
                ...(at.agentTlsSecret ? [{ name: "agent-ca", mountPath: AGENT_CA_DIR, readOnly: true }] : []),
                ...(at.webhookTlsSecret
                  ? [{ name: "webhook-tls", mountPath: DEFAULT_WEBHOOK_CERT_DIR, readOnly: true }]
                  : []),
              ],
            },
          ],
          volumes: [
            ...(at.agentTlsSecret
              ? [
                  {
                    name: "agent-ca",
                    // The CA only: the operator never holds the agents' serving key.
                    secret: {
                      secretName: at.agentTlsSecret,
                      items: [{ key: "ca.crt", path: posix.basename(DEFAULT_AGENT_CA_FILE) }],
                      // The operator (or cert-manager) may create it after the pod starts.
                      optional: true,
                    },
                  },
                ]
              : []),
            // The webhook's own certificate and key (tls.crt, tls.key), re-read when the Secret rotates.
            ...(at.webhookTlsSecret
              ? [{ name: "webhook-tls", secret: { secretName: at.webhookTlsSecret, optional: true } }]
              : []),
          ],
        },
      },
    },
  };
}

/**
 * A voluntary disruption (a drain, a cluster upgrade) takes one operator replica at a time: the
 * other leads or takes over within a retry period (the stopping leader releases the Lease).
 */
export function operatorDisruptionBudget(at: Pick<OperatorPlacement, "name" | "namespace">) {
  const labels = operatorLabels(at.name);
  return {
    apiVersion: "policy/v1" as const,
    kind: "PodDisruptionBudget" as const,
    metadata: { name: at.name, namespace: at.namespace, labels },
    spec: { maxUnavailable: 1, selector: { matchLabels: labels } },
  };
}
