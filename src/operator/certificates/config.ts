import { z } from "zod";
import { AGENT_SERVER_NAME } from "../../agent-api/auth";
import type { ServingTarget } from "./issuer";
import {
  DEFAULT_CA_DAYS,
  DEFAULT_CA_PUBLISH_MS,
  DEFAULT_LEAF_DAYS,
  type CertificateSettings,
} from "./renewal";
import { MAX_LEAF_DAYS } from "../../tls/x509";

/** The operator's certificate flags (src/operator/config.ts takes them in). */
export const CERTIFICATE_FLAGS = {
  "issue-certificates": { type: "string" },
  "issue-agent-secret": { type: "string" },
  "issue-webhook-secret": { type: "string" },
  "issue-webhook-dns-name": { type: "string" },
  "issue-webhook-configuration": { type: "string" },
  "certificate-days": { type: "string" },
  "certificate-rotation": { type: "string" },
} as const;

export const CERTIFICATE_USAGE = `  --issue-certificates SECRET  issue the serving certificates from a CA kept in this Secret of the
                        agents' namespace (created, renewed; leader only); with:
  --issue-agent-secret NAME     the agents' serving Secret (kubernetes.io/tls + ca.crt), for ${AGENT_SERVER_NAME}
  --issue-webhook-secret NAME   the webhook's serving Secret, for --issue-webhook-dns-name
  --issue-webhook-dns-name N    the webhook Service's DNS name (N and N.cluster.local)
  --issue-webhook-configuration NAME  the ValidatingWebhookConfiguration whose caBundle is set
  --certificate-days N  a serving certificate's lifetime, 1 to ${MAX_LEAF_DAYS} (default ${DEFAULT_LEAF_DAYS});
                        renewed at two thirds of it
  --certificate-rotation N  re-issue every serving certificate issued for a lower N (default 0)`;

const name = z
  .string()
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, { error: "must be an object name" })
  .max(253);

export const certificateFlagsSchema = {
  "issue-certificates": name.optional(),
  "issue-agent-secret": name.optional(),
  "issue-webhook-secret": name.optional(),
  "issue-webhook-dns-name": name.optional(),
  "issue-webhook-configuration": name.optional(),
  "certificate-days": z.coerce.number().int().min(1).max(MAX_LEAF_DAYS).default(DEFAULT_LEAF_DAYS),
  "certificate-rotation": z.coerce.number().int().min(0).default(0),
};

const _flags = z.object(certificateFlagsSchema);
type Flags = z.output<typeof _flags>;

/** What the operator issues, when --issue-certificates asks for it. */
export interface CertificatesConfig {
  readonly caSecret: string;
  readonly targets: readonly ServingTarget[];
  readonly webhookConfiguration?: string;
  readonly settings: CertificateSettings;
}

/** Problems of the certificate flags taken together, each with its flag. */
export function certificateFlagProblems(c: Flags): Array<{ path: string; message: string }> {
  const problems: Array<{ path: string; message: string }> = [];
  const issuing = !!c["issue-certificates"];
  for (const flag of ["issue-agent-secret", "issue-webhook-secret", "issue-webhook-configuration"] as const)
    if (c[flag] && !issuing) problems.push({ path: `--${flag}`, message: "goes with --issue-certificates" });
  if (c["issue-webhook-secret"] && !c["issue-webhook-dns-name"])
    problems.push({ path: "--issue-webhook-dns-name", message: "--issue-webhook-secret needs it" });
  if (c["issue-webhook-configuration"] && !c["issue-webhook-secret"])
    problems.push({ path: "--issue-webhook-configuration", message: "goes with --issue-webhook-secret" });
  return problems;
}

export function certificatesConfig(c: Flags): CertificatesConfig | undefined {
  const caSecret = c["issue-certificates"];
  if (!caSecret) return undefined;
  const dns = c["issue-webhook-dns-name"];
  const targets: ServingTarget[] = [
    ...(c["issue-agent-secret"]
      ? [{ secret: c["issue-agent-secret"], commonName: AGENT_SERVER_NAME, dnsNames: [AGENT_SERVER_NAME] }]
      : []),
    ...(c["issue-webhook-secret"] && dns
      ? [{ secret: c["issue-webhook-secret"], commonName: dns, dnsNames: [dns, `${dns}.cluster.local`] }]
      : []),
  ];
  return {
    caSecret,
    targets,
    ...(c["issue-webhook-configuration"] ? { webhookConfiguration: c["issue-webhook-configuration"] } : {}),
    settings: {
      leafDays: c["certificate-days"],
      caDays: DEFAULT_CA_DAYS,
      rotation: c["certificate-rotation"],
      caPublishMs: DEFAULT_CA_PUBLISH_MS,
    },
  };
}
