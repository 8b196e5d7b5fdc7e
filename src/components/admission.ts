import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import { lvmNodeOwnerPolicy, serviceAccountUsername, webhookConfiguration } from "../agent-api/admission";
import { certManagerCertificate, type CertificateSettings } from "./certificate-settings";

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
   * Deprecated: `certificates.issuerRef` (both certificates). Issue the webhook's serving
   * certificate alone with cert-manager: LvmSystem creates a Certificate for this issuer, and
   * cert-manager's CA injector sets the webhook's caBundle.
   * @default none (the operator issues it)
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
  return settings?.enabled === false ? undefined : `${operator}-webhook-serving`;
}

/** The webhook Service's DNS name, in its serving certificate. */
export const webhookDnsName = (namespace: string, operator: string) => `${operator}-webhook.${namespace}.svc`;

/** Pulumi's await annotation, and what it waits for on the webhook configuration: its caBundle. */
const WAIT_FOR = "pulumi.com/waitFor";
export const WEBHOOK_CA_BUNDLE_SET = "jsonpath={.webhooks[0].clientConfig.caBundle}";

/** The ValidatingWebhookConfiguration's name (cluster-wide, so the namespace is in it). */
export const webhookConfigurationName = (namespace: string, operator: string) => `${namespace}-${operator}`;

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
  /** LvmSystem's `certificates`: with `issuerRef`, cert-manager issues the webhook's certificate. */
  readonly certificates?: CertificateSettings;
}

/**
 * The webhook's Service, its serving certificate when cert-manager issues it (else the operator
 * issues it, nothing here), the ValidatingWebhookConfiguration and the ValidatingAdmissionPolicy
 * with its binding, both for the LvmSystem's namespace only (its operator watches only that one;
 * two systems in one cluster never refuse each other's operator). The webhook and the policy are
 * src/agent-api/admission.ts, as the tests apply them.
 *
 * No caBundle: the operator sets it (server-side apply, its own field manager), or cert-manager's
 * CA injector; these manifests never name the field, so whoever applies them never fights either.
 */
export function admissionManifests(at: AdmissionPlacement, settings: AdmissionSettings) {
  const serviceName = `${at.operator}-webhook`;
  const secretName = webhookTlsSecretName(at.operator, settings)!;
  const dnsName = webhookDnsName(at.namespace, at.operator);
  // cert-manager (certificates.issuerRef, or the older admission.certManagerIssuer), else the operator.
  const issuerRef = at.certificates?.issuerRef ?? settings.certManagerIssuer;
  const operatorUsername = serviceAccountUsername(at.namespace, at.operator);
  return {
    service: {
      apiVersion: "v1" as const,
      kind: "Service" as const,
      metadata: { name: serviceName, namespace: at.namespace, labels: { ...at.podLabels } },
      spec: {
        selector: { ...at.podLabels },
        ports: [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }],
      },
    },
    ...(issuerRef
      ? {
          certificate: certManagerCertificate(
            serviceName,
            at.namespace,
            secretName,
            [dnsName, `${dnsName}.cluster.local`],
            { ...at.certificates, issuerRef },
            { "app.kubernetes.io/name": "pulumi-lvm-operator" },
          ),
        }
      : {}),
    webhook: webhookConfiguration({
      name: webhookConfigurationName(at.namespace, at.operator),
      clientConfig: { service: { namespace: at.namespace, name: serviceName, port: 443 } },
      operatorUsername,
      namespace: at.namespace,
      timeoutSeconds: settings.timeoutSeconds ?? DEFAULT_WEBHOOK_TIMEOUT_SECONDS,
      ...(issuerRef
        ? { annotations: { "cert-manager.io/inject-ca-from": `${at.namespace}/${serviceName}` } }
        : {}),
    }),
    ...lvmNodeOwnerPolicy({
      name: `${at.namespace}-${at.operator}-lvmnode-owner`,
      operatorUsername,
      namespace: at.namespace,
    }),
  };
}

/** admissionManifests' objects as resources, the webhook once the operator's Deployment is ready. */
export function operatorAdmission(
  operator: string,
  m: ReturnType<typeof admissionManifests>,
  deployment: pulumi.Resource,
  ctx: AdmissionContext,
): void {
  const { parent, namespace: ns } = ctx;
  const serviceName = m.service.metadata.name;
  const service = new k8s.core.v1.Service(serviceName, m.service, { parent, dependsOn: [ns] });
  const certificate = m.certificate
    ? new k8s.apiextensions.CustomResource(serviceName, m.certificate, { parent, dependsOn: [ns] })
    : undefined;
  new k8s.admissionregistration.v1.ValidatingWebhookConfiguration(
    `${operator}-webhook`,
    {
      metadata: {
        ...m.webhook.metadata,
        // Ready for Pulumi once its caBundle is set (by the operator or cert-manager), not when it
        // is created: a node set created in between was refused ("certificate signed by unknown
        // authority"; failurePolicy Fail), measured in a first up whose agents came up first.
        annotations: { ...m.webhook.metadata.annotations, [WAIT_FOR]: WEBHOOK_CA_BUNDLE_SET },
      },
      webhooks: m.webhook.webhooks as unknown as k8s.types.input.admissionregistration.v1.ValidatingWebhook[],
    },
    // Only once the operator answers (and, issuing, has the webhook's certificate).
    { parent, dependsOn: [service, deployment, ...(certificate ? [certificate] : [])] },
  );
  const vap = new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(
    `${operator}-lvmnode-owner`,
    m.policy as unknown as k8s.admissionregistration.v1.ValidatingAdmissionPolicyArgs,
    { parent, dependsOn: [...ctx.crds] },
  );
  new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(
    `${operator}-lvmnode-owner`,
    m.binding as unknown as k8s.admissionregistration.v1.ValidatingAdmissionPolicyBindingArgs,
    { parent, dependsOn: [vap] },
  );
}
