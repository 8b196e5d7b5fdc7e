import { z } from "zod";
import { MAX_LEAF_DAYS } from "../tls/x509";

/*
 * The serving certificates of the agents and of the operator's webhook (docs/components.md,
 * Certificates): issued and renewed by the operator (the default; Pulumi holds no key), or by
 * cert-manager (`issuerRef`). Pulumi generates no key and keeps no certificate in its state.
 */

export interface CertificateSettings {
  /**
   * How long each serving certificate is valid, in days (1–365). It is renewed at two thirds of
   * that (60 days for 90), by the operator or by cert-manager, with a new key.
   * @default 90
   */
  readonly validityDays?: number;
  /**
   * Re-issue the serving certificates now (a leaked key, a policy): raise it and run `pulumi up`.
   * The operator re-issues every serving certificate issued for a lower number, in place; the
   * agents and the webhook serve the new one without a restart. Never lower it. Not used with
   * `issuerRef` (cert-manager: `cmctl renew`).
   * @default 0
   */
  readonly rotation?: number;
  /**
   * A cert-manager issuer: LvmSystem renders cert-manager Certificates for the agents and the
   * webhook, and cert-manager's CA injector sets the webhook's caBundle; the operator issues
   * nothing. The issuer must write `ca.crt` into the Secret (a CA, Vault or Venafi issuer; not
   * ACME): the operator trusts exactly that CA for the agents. `agentTlsSecretName`, when set,
   * still wins for the agents.
   * @default none (the operator issues them)
   * @example { name: "cluster-ca", kind: "ClusterIssuer" }
   */
  readonly issuerRef?: CertManagerIssuer;
}

/** A cert-manager issuer. */
export interface CertManagerIssuer {
  /** @example "cluster-ca" */
  readonly name: string;
  /** Issuer (in the LvmSystem's namespace), ClusterIssuer, or an external issuer's kind. @default "Issuer" */
  readonly kind?: string;
  /** The issuer's API group. @default "cert-manager.io" */
  readonly group?: string;
}

export const DEFAULT_VALIDITY_DAYS = 90;

export const certManagerIssuerSchema = z
  .strictObject({
    name: z.string().min(1),
    kind: z
      .string()
      .regex(/^[A-Z][A-Za-z0-9]*$/, "must be a Kind, e.g. Issuer or ClusterIssuer")
      .optional(),
    group: z.string().min(1).optional(),
  })
  .superRefine((issuer, ctx) => {
    const certManager = (issuer.group ?? "cert-manager.io") === "cert-manager.io";
    if (certManager && issuer.kind !== undefined && !["Issuer", "ClusterIssuer"].includes(issuer.kind))
      ctx.addIssue({
        code: "custom",
        path: ["kind"],
        message: `cert-manager.io has Issuer and ClusterIssuer (got ${JSON.stringify(issuer.kind)}); an external issuer needs its group`,
      });
  });

export const certificateSettingsSchema = z.strictObject({
  validityDays: z.number().int().min(1).max(MAX_LEAF_DAYS).optional(),
  rotation: z.number().int().min(0).optional(),
  issuerRef: certManagerIssuerSchema.optional(),
});

/**
 * A cert-manager Certificate (cert-manager.io/v1) for a serving certificate: a leaf for `dnsNames`,
 * serverAuth, a new key at every renewal, `validityDays` long, renewed at two thirds of it.
 */
export function certManagerCertificate(
  name: string,
  namespace: string,
  secretName: string,
  dnsNames: readonly string[],
  settings: CertificateSettings & { issuerRef: CertManagerIssuer },
  labels: Readonly<Record<string, string>>,
) {
  const days = settings.validityDays ?? DEFAULT_VALIDITY_DAYS;
  return {
    apiVersion: "cert-manager.io/v1",
    kind: "Certificate",
    metadata: { name, namespace, labels: { ...labels } },
    spec: {
      secretName,
      secretTemplate: { labels: { ...labels } },
      dnsNames: [...dnsNames],
      duration: `${days * 24}h`,
      renewBefore: `${Math.floor((days * 24) / 3)}h`,
      isCA: false,
      usages: ["digital signature", "key encipherment", "server auth"],
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      issuerRef: {
        group: settings.issuerRef.group ?? "cert-manager.io",
        kind: settings.issuerRef.kind ?? "Issuer",
        name: settings.issuerRef.name,
      },
    },
  };
}

/** What the operator issues (src/operator/certificates), when it does. */
export interface OperatorIssuance {
  /** The CA's Secret, the operator's own. */
  readonly caSecret: string;
  /** The agents' serving Secret; undefined: the user's (agentTlsSecretName), or plain HTTP. */
  readonly agentSecret?: string;
  /** The webhook's serving Secret, its Service's DNS name and its configuration; undefined: admission off. */
  readonly webhook?: { readonly secret: string; readonly dnsName: string; readonly configuration: string };
  readonly validityDays: number;
  readonly rotation: number;
}

/** The operator's flags for it (src/operator/certificates/config.ts). */
export function issuanceFlags(i: OperatorIssuance): string[] {
  return [
    "--issue-certificates",
    i.caSecret,
    ...(i.agentSecret ? ["--issue-agent-secret", i.agentSecret] : []),
    ...(i.webhook
      ? [
          "--issue-webhook-secret",
          i.webhook.secret,
          "--issue-webhook-dns-name",
          i.webhook.dnsName,
          "--issue-webhook-configuration",
          i.webhook.configuration,
        ]
      : []),
    "--certificate-days",
    String(i.validityDays),
    "--certificate-rotation",
    String(i.rotation),
  ];
}

/**
 * The operator's rights for it, least privilege: `create` on Secrets in its namespace (create
 * cannot be limited to names), everything else on its own Secrets by name; get and patch on its
 * one ValidatingWebhookConfiguration (clusterWide).
 */
export function issuanceRules(i: OperatorIssuance) {
  const secrets = [
    i.caSecret,
    ...(i.agentSecret ? [i.agentSecret] : []),
    ...(i.webhook ? [i.webhook.secret] : []),
  ];
  return {
    namespaced: [
      { apiGroups: [""], resources: ["secrets"], verbs: ["create"] },
      { apiGroups: [""], resources: ["secrets"], resourceNames: secrets, verbs: ["get", "update", "patch"] },
    ],
    clusterWide: i.webhook
      ? [
          {
            apiGroups: ["admissionregistration.k8s.io"],
            resources: ["validatingwebhookconfigurations"],
            resourceNames: [i.webhook.configuration],
            verbs: ["get", "patch"],
          },
        ]
      : [],
  };
}
