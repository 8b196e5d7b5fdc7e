import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { lvmNodeOwnerPolicy, serviceAccountUsername, webhookConfiguration } from "../agent-api/admission";
import { issueAgentCertificates } from "./agent-certificates";

/** The port the operator serves the admission webhook on (HTTPS), in its pods. */
export const WEBHOOK_PORT = 9443;

/** The operator's admission checks, as LvmSystem sets them up (docs/operator.md, Admission). */
export interface AdmissionSettings {
  /**
   * Refuse, before they are stored, LVMNodeSets that overlap another set or break a rule the CRDs
   * cannot check, and LVMNodes no LVMNodeSet controls (a ValidatingAdmissionPolicy and the
   * operator's webhook).
   * @default true
   */
  readonly enabled?: boolean;
  /**
   * Issue the webhook's serving certificate with cert-manager: LvmSystem creates a Certificate for
   * this issuer, and cert-manager's CA injector sets the webhook's caBundle. Without it LvmSystem
   * generates a CA and the certificate itself (as for the agents).
   * @default none (generated)
   */
  readonly certManagerIssuer?: CertManagerIssuer;
  /**
   * How long the API server waits for the operator's webhook (1–30 s). failurePolicy is Fail, so a
   * webhook slower than this refuses the LVMNodeSet change: raise it for slow or overloaded nodes.
   * @default 10 (the Kubernetes default)
   */
  readonly timeoutSeconds?: number;
}

/** The webhook's default timeout: Kubernetes' own (5 s refused changes on a starved node, test/journey). */
export const DEFAULT_WEBHOOK_TIMEOUT_SECONDS = 10;

/** A cert-manager issuer. */
export interface CertManagerIssuer {
  /** @example "cluster-ca" */
  readonly name: string;
  /** @default "Issuer" (in the LvmSystem's namespace) */
  readonly kind?: string;
}

export const admissionSettingsSchema = z.strictObject({
  enabled: z.boolean().optional(),
  certManagerIssuer: z
    .strictObject({ name: z.string().min(1), kind: z.enum(["Issuer", "ClusterIssuer"]).optional() })
    .optional(),
  timeoutSeconds: z.number().int().min(1).max(30).optional(),
});

/** The Secret (kubernetes.io/tls) the operator serves the webhook with; undefined when admission is off. */
export function webhookTlsSecretName(operator: string, settings?: AdmissionSettings): string | undefined {
  return settings?.enabled === false ? undefined : `${operator}-webhook-tls`;
}

/** Where the resources go (LvmSystem's WorkloadContext). */
export interface AdmissionContext {
  readonly parent: pulumi.Resource;
  readonly namespace: pulumi.Resource;
  readonly crds: readonly pulumi.Resource[];
}

export interface AdmissionPlacement {
  readonly namespace: string;
  /** The operator's name (ServiceAccount, Deployment). */
  readonly operator: string;
  /** The labels of the operator's pods: the webhook Service selects them all (every replica answers). */
  readonly podLabels: Readonly<Record<string, string>>;
  /** The operator's Deployment: the webhook is registered once it is available. */
  readonly deployment: pulumi.Resource;
}

/**
 * The webhook's Service, its serving certificate (generated, or a cert-manager Certificate), the
 * ValidatingWebhookConfiguration and the ValidatingAdmissionPolicy with its binding, both for the
 * LvmSystem's namespace only (its operator watches only that one; two systems in one cluster never
 * refuse each other's operator). The manifests are src/agent-api/admission.ts, as the tests apply them.
 */
export function operatorAdmission(
  at: AdmissionPlacement,
  settings: AdmissionSettings,
  ctx: AdmissionContext,
) {
  const { parent, namespace: ns } = ctx;
  const serviceName = `${at.operator}-webhook`;
  const secretName = webhookTlsSecretName(at.operator, settings)!;
  const dnsName = `${serviceName}.${at.namespace}.svc`;
  const service = new k8s.core.v1.Service(
    serviceName,
    {
      metadata: { name: serviceName, namespace: at.namespace, labels: { ...at.podLabels } },
      spec: {
        selector: { ...at.podLabels },
        ports: [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }],
      },
    },
    { parent, dependsOn: [ns] },
  );
  const issuer = settings.certManagerIssuer;
  const certificate = issuer
    ? new k8s.apiextensions.CustomResource(
        serviceName,
        {
          apiVersion: "cert-manager.io/v1",
          kind: "Certificate",
          metadata: { name: serviceName, namespace: at.namespace },
          spec: {
            secretName,
            dnsNames: [dnsName, `${dnsName}.cluster.local`],
            issuerRef: { group: "cert-manager.io", kind: issuer.kind ?? "Issuer", name: issuer.name },
          },
        },
        { parent, dependsOn: [ns] },
      )
    : undefined;
  const caPem = issuer
    ? undefined
    : generatedWebhookSecret(secretName, at.namespace, dnsName, { parent, dependsOn: [ns] });
  const operatorUsername = serviceAccountUsername(at.namespace, at.operator);
  const config = pulumi.output(caPem ?? "").apply((ca) =>
    webhookConfiguration({
      name: `${at.namespace}-${at.operator}`,
      clientConfig: { service: { namespace: at.namespace, name: serviceName, port: 443 } },
      ...(ca ? { caBundle: ca } : {}),
      operatorUsername,
      namespace: at.namespace,
      timeoutSeconds: settings.timeoutSeconds ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
      ...(issuer
        ? { annotations: { "cert-manager.io/inject-ca-from": `${at.namespace}/${serviceName}` } }
        : {}),
    }),
  );
  const webhook = new k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
    `${at.operator}-webhook`,
    {
      metadata: config.metadata,
      webhooks: config.webhooks as unknown as k8s.types.input.admissionregistration.v1.ValidatingWebhook[],
    },
    // cert-manager's injector owns caBundle; either way only once the operator answers.
    {
      parent,
      dependsOn: [service, at.deployment, ...(certificate ? [certificate] : [])],
      ...(issuer ? { ignoreChanges: ["webhooks[*].clientConfig.caBundle"] } : {}),
    },
  );
  const { policy, binding } = lvmNodeOwnerPolicy({
    name: `${at.namespace}-${at.operator}-lvmnode-owner`,
    operatorUsername,
    namespace: at.namespace,
  });
  const vap = new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
    `${at.operator}-lvmnode-owner`,
    policy as unknown as k8s.admissionregistration.v1.ValidatingAdmissionPolicyArgs,
    { parent, dependsOn: [...ctx.crds] },
  );
  new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
    `${at.operator}-lvmnode-owner`,
    binding as unknown as k8s.admissionregistration.v1.ValidatingAdmissionPolicyBindingArgs,
    { parent, dependsOn: [vap] },
  );
  return { service, webhook, secretName };
}

/**
 * A generated Secret for the webhook, like the agents' (agent-tls.ts): a CA for this system and a
 * serving certificate for the Service's DNS name, the CA's key discarded; created once and kept
 * (`ignoreChanges`). The CA PEM for the caBundle is read back from the Secret as stored, so a later
 * `pulumi up` (which issues new, unused certificates in memory) keeps the caBundle it has.
 */
function generatedWebhookSecret(
  name: string,
  namespace: string,
  dnsName: string,
  opts: pulumi.CustomResourceOptions,
): pulumi.Output<string> {
  const issued = pulumi.output(
    issueAgentCertificates({ serverName: dnsName, caName: "pulumi-lvm webhook CA" }),
  );
  const secret = new k8s.core.v1.Secret(
    name,
    {
      metadata: { name, namespace, labels: { "app.kubernetes.io/name": "pulumi-lvm-operator" } },
      type: "kubernetes.io/tls",
      stringData: pulumi.secret(
        issued.apply((c) => ({ "tls.crt": c.cert, "tls.key": c.key, "ca.crt": c.caCert })),
      ),
    },
    { ...opts, ignoreChanges: ["data", "stringData"], additionalSecretOutputs: ["data", "stringData"] },
  );
  // The CA certificate is public; only the key needs to stay a secret.
  return pulumi.unsecret(
    pulumi.all([secret.data, issued]).apply(([data, fresh]) => {
      const stored = (data as Record<string, string> | undefined)?.["ca.crt"];
      return stored ? Buffer.from(stored, "base64").toString("utf8") : fresh.caCert;
    }),
  );
}
