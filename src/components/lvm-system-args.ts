import { monitoringSettingsSchema, type MonitoringSettings } from "./monitoring";
import { admissionSettingsSchema, type AdmissionSettings } from "./admission";
import { z } from "zod";
import { dnsLabelProblem, QUANTITY_PATTERN, type ValidationProblem } from "../api";
import { defaultCrdDirectory, loadCrdManifests, type CrdManifest } from "./crds";
import { checkTopolvmArgs, topolvmArgsSchema, type TopolvmSettings } from "./topolvm-args";
import type { TopolvmPlan } from "./topolvm-values";
import * as pulumi from "@pulumi/pulumi";
import { agentTlsProblems } from "./agent-tls";
import { certificateSettingsSchema, type CertificateSettings } from "./certificate-settings";
import { argsProblems, labels, namespaceName, objectName, throwIfInvalid } from "./validate-args";
// --- network fences (network-policies.ts) ---
import { networkPolicySettingsSchema, type NetworkPolicySettings } from "./network-policies";
// --- end network fences ---
// --- operator placement (operator-placement.ts) ---
import {
  operatorAffinitySchema,
  operatorNodeSelectorSchema,
  type OperatorAffinity,
} from "./operator-placement";
// --- end operator placement ---
// --- image digest (image-ref.ts) ---
import { imageDigestProblems, imageDigestSchema } from "./image-ref";
// --- end image digest ---

export type { TopolvmSettings, TopolvmNodeSet } from "./topolvm-args";

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
   * An Input: the image a build in the same program pushed (its Output) works too.
   * @example "registry.example.com/storage/pulumi-lvm:0.1.0"
   */
  readonly agentImage?: pulumi.Input<string>;
  // --- image digest (image-ref.ts) ---
  /**
   * The image's manifest digest, as `npm run image` prints it (`manifest sha256:…`) or your registry
   * does: the pods then name `<agentImage>@sha256:…`, resolved by content, not by a tag that can be
   * moved (docs/image.md). The operator's default image gets it too.
   * @default none (the image by its tag)
   * @example "sha256:abd7fa6ff9dd5c5219f18dba630d0d0564217e2da3f9e805b110bdeb01716ff7"
   */
  readonly agentImageDigest?: string;
  // --- end image digest ---
  /** Always, IfNotPresent or Never. @default "IfNotPresent" */
  readonly agentImagePullPolicy?: string;
  /** The agent's port (API, /healthz, /readyz, /metrics). @default 8080 */
  readonly agentPort?: number;
  /** How the image starts the agent. @default ["pulumi-lvm", "agent"] */
  readonly agentCommand?: string[];
  /** Extra agent flags (`pulumi-lvm agent --help`), after ours. @default [] @example ["--command-timeout", "5m"] */
  readonly agentArgs?: string[];
  /**
   * A kubernetes.io/tls Secret in the namespace, yours (e.g. cert-manager's), with the agents' serving
   * certificate (tls.crt, tls.key) for the DNS name `pulumi-lvm-agent` and its CA (ca.crt), which
   * the operator trusts for the agents and nothing else.
   * @default a Secret `<name>-agent-serving` the operator issues and renews (or cert-manager, with
   * `certificates.issuerRef`)
   * @example "lvm-agent-tls"
   */
  readonly agentTlsSecretName?: string;
  /**
   * The agents' and the webhook's serving certificates: their lifetime, a re-issue now
   * (`rotation`), or cert-manager (`issuerRef`). docs/components.md, Certificates.
   * @default issued by the operator, valid 90 days, renewed at 60
   * @example { issuerRef: { name: "cluster-ca", kind: "ClusterIssuer" } }
   */
  readonly certificates?: CertificateSettings;
  /**
   * Agents serve, and the operator calls them over, plain HTTP on the pod network: bearer tokens and
   * plans travel unencrypted and anyone on the path can answer for an agent. Only for a lab.
   * @default false
   */
  readonly agentPlainHttp?: boolean;
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
   * Keep the lvm.topolvm.io CRDs in the cluster when this component is deleted: deleting a CRD
   * deletes every LVMNodeSet and LVMNode with it. Kept CRDs are server-side applied (a
   * CustomResourceDefinitionPatch, with force, as field manager "pulumi-lvm"): an install creates
   * them, adopts the ones an earlier install kept, and applies this version's schema to them.
   * `false`: plain CustomResourceDefinitions, deleted with the stack; an install then fails with
   * "already exists" while a kept CRD is in the cluster (docs/components.md, "CRDs: kept, adopted,
   * upgraded").
   * @default true
   * @example false
   */
  readonly retainCrdsOnDelete?: boolean;
  /**
   * Install TopoLVM from its Helm chart, configured from a second copy of every node set.
   * @deprecated In TypeScript, declare each node set once and give the NodeSets to a Topolvm
   * component: `new Topolvm(name, { chartVersion }, { system, nodeSets })` (docs/components.md,
   * "Upgrading from topolvm.nodeSets"). Other languages keep this arg: they cannot pass NodeSets.
   * @default not installed
   */
  readonly topolvm?: TopolvmSettings;
  /**
   * The operator: turns the namespace's LVMNodeSets into LVMNodes, applies them through the agents
   * and keeps their status (docs/operator.md).
   * @default deployed, from the agent's image
   * @example { resources: { limits: { memory: "512Mi" } } }
   */
  readonly operator?: OperatorSettings;
  // --- network fences (network-policies.ts) ---
  /**
   * NetworkPolicies around the agents and the operator: the agents' port only from the operator, the
   * control plane and the monitoring namespaces; the operator's webhook only from the control plane,
   * its metrics only from the monitoring namespaces (docs/components.md, "Network policies").
   * @default enabled; control plane: every address; monitoring: the namespace "monitoring"
   * @example { controlPlane: { cidrs: ["10.0.0.0/28"] }, monitoringNamespaces: ["prometheus"] }
   */
  readonly networkPolicies?: NetworkPolicySettings;
  // --- end network fences ---
  /**
   * Prometheus Operator objects: ServiceMonitors for the agents and the operator, and a
   * PrometheusRule with the alerts (thin pools filling, volume groups full, missing disks, LVMNodes
   * not Ready, failed applies, agents or operator down, approvals waiting) and the lvm_nodes_*
   * recording rules (docs/components.md, "Monitoring"). Needs the monitoring.coreos.com CRDs.
   * @default none
   * @example { serviceMonitor: true, rules: true, thresholds: { thinPoolWarningPercent: 70 } }
   */
  readonly monitoring?: MonitoringSettings;
}

/** The operator (docs/operator.md), as LvmSystem deploys it. */
export interface OperatorSettings {
  /**
   * Deploy the operator. Without it nothing turns LVMNodeSets into LVMNodes or applies them, and only
   * NodeSets with `agents` or `cluster` (Pulumi applying through the agents) change disks.
   * @default true
   */
  readonly enabled?: boolean;
  /** Its image. @default the agent's image (one `pulumi-lvm` binary with both subcommands) */
  readonly image?: pulumi.Input<string>;
  /** How the image starts the operator. @default ["pulumi-lvm", "operator"] */
  readonly command?: string[];
  /** Extra operator flags (`pulumi-lvm operator --help`), after ours. @default [] @example ["--resync", "10m", "--deselection-grace", "5m"] */
  readonly args?: string[];
  /** @default { requests: { cpu: "20m", memory: "96Mi" }, limits: { memory: "256Mi" } } */
  readonly resources?: ResourceRequirements;
  /**
   * Replicas of the operator (1–5): one leads on a Lease, the others stand by to take over. On a
   * one-node cluster (an edge box) a standby on the same node buys nothing and costs a process.
   * @default 2
   * @example 1
   */
  readonly replicas?: number;
  /**
   * Report each LVMNodeSet's `ProviderReady` condition (`--provider-ready`): TopoLVM's CSIDriver
   * exists and every selected node's CSINode lists `topolvm.io`; the set's `Ready` waits for it.
   * Turn it off only for a system whose volume groups no TopoLVM uses (its sets would never be Ready).
   * @default true
   */
  readonly providerReady?: boolean;
  /**
   * Admission: overlapping or invalid LVMNodeSets and hand-made LVMNodes refused before they are
   * stored (docs/operator.md, Admission).
   * @default enabled, with a certificate the operator issues (`certificates`)
   */
  readonly admission?: AdmissionSettings;
  // --- operator placement (operator-placement.ts) ---
  /**
   * Nodes the operator runs on. Its token drives every agent, so whoever owns its node can drive
   * every node's disks: pin it to nodes you trust as much as the control plane (docs/operator.md,
   * "Where the operator runs").
   * @default { "kubernetes.io/os": "linux" }
   * @example { "node-role.kubernetes.io/control-plane": "" }
   */
  readonly nodeSelector?: Record<string, string>;
  /** Taints the operator tolerates. @default [] @example [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" }] */
  readonly tolerations?: Toleration[];
  /**
   * The operator's affinity (core/v1 Affinity); each kind given replaces LvmSystem's own.
   * @default nodes the agents' nodeSelector selects avoided (a preference), the two replicas preferably on two nodes
   */
  readonly affinity?: OperatorAffinity;
  // --- end operator placement ---
}

const quantity = z.string().regex(new RegExp(QUANTITY_PATTERN), {
  error: (i) => `must be a quantity such as "64Mi" or "20m" (got ${JSON.stringify(i.input)})`,
});

/** An image: a non-empty string here; an Output when it resolves, by the apiserver (it refuses an empty image). */
const imageInput = z.unknown().superRefine((image, ctx) => {
  if (pulumi.Output.isInstance(image) || image instanceof Promise) return;
  if (typeof image !== "string")
    ctx.addIssue({ code: "custom", message: "must be a string or an Output of one" });
  else if (image.length === 0) ctx.addIssue({ code: "custom", message: "must not be empty" });
});

const resourceRequirements = z.strictObject({
  requests: z.record(z.string(), quantity).optional(),
  limits: z.record(z.string(), quantity).optional(),
});

const tolerationsSchema = z.array(
  z.strictObject({
    key: z.string().optional(),
    operator: z.enum(["Exists", "Equal"]).optional(),
    value: z.string().optional(),
    effect: z.enum(["NoSchedule", "PreferNoSchedule", "NoExecute"]).optional(),
    tolerationSeconds: z.number().int().optional(),
  }),
);

const argsSchema = z.strictObject({
  namespace: namespaceName.optional(),
  agentImage: imageInput.optional(),
  agentImageDigest: imageDigestSchema.optional(), // image digest (image-ref.ts)
  agentImagePullPolicy: z.enum(["Always", "IfNotPresent", "Never"]).optional(),
  agentPort: z.number().int().min(1).max(65535).optional(),
  agentCommand: z.array(z.string()).min(1).optional(),
  agentArgs: z.array(z.string()).optional(),
  agentTlsSecretName: objectName.optional(),
  agentPlainHttp: z.boolean().optional(),
  certificates: certificateSettingsSchema.optional(),
  nodeSelector: labels.optional(),
  tolerations: tolerationsSchema.optional(),
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
      image: imageInput.optional(),
      command: z.array(z.string()).min(1).optional(),
      args: z.array(z.string()).optional(),
      resources: resourceRequirements.optional(),
      replicas: z.number().int().min(1).max(5).optional(),
      providerReady: z.boolean().optional(),
      admission: admissionSettingsSchema.optional(),
      // --- operator placement ---
      nodeSelector: operatorNodeSelectorSchema.optional(),
      tolerations: tolerationsSchema.optional(),
      affinity: operatorAffinitySchema.optional(),
      // --- end operator placement ---
    })
    .optional(),
  // --- network fences ---
  networkPolicies: networkPolicySettingsSchema.optional(),
  monitoring: monitoringSettingsSchema.optional(),
  // --- end network fences ---
});

/** LvmSystem's args checked, every problem at once (ValidationError), and its CRDs read. */
export function validateSystem(
  name: string,
  args: LvmSystemArgs,
): { crds: CrdManifest[]; topolvm?: TopolvmPlan } {
  const problems: ValidationProblem[] = [...argsProblems(argsSchema, args), ...agentTlsProblems(args)];
  problems.push(...imageDigestProblems(args)); // image digest (image-ref.ts)
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
    throw new Error(
      `LvmSystem "${name}" cannot read its CustomResourceDefinitions: ${(e as Error).message}`,
      {
        cause: e,
      },
    );
  }
  return { crds, ...(topolvm?.plan ? { topolvm: topolvm.plan } : {}) };
}
