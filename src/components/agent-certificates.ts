import { AGENT_SERVER_NAME } from "../agent-api/auth";
import { issueCa, issueLeaf, MAX_LEAF_DAYS } from "../tls/x509";

/** PEM texts: what a kubernetes.io/tls Secret holds (tls.crt, tls.key) plus its ca.crt. */
export interface AgentCertificates {
  /** The agents' CA: the only certificate the operator trusts for them. */
  readonly caCert: string;
  /** The serving certificate every agent presents, for AGENT_SERVER_NAME, signed by the CA. */
  readonly cert: string;
  /** Its private key (PKCS#8). */
  readonly key: string;
}

export interface IssueOptions {
  /** @default now */
  readonly now?: Date;
  /** Validity of both certificates, 1 to MAX_CERTIFICATE_DAYS. @default MAX_CERTIFICATE_DAYS */
  readonly days?: number;
  /** The serving certificate's common name. @default AGENT_SERVER_NAME ("pulumi-lvm-agent") */
  readonly serverName?: string;
  /** Its DNS names (subjectAltName). @default [serverName] */
  readonly dnsNames?: readonly string[];
  /** The CA's common name. @default "pulumi-lvm agent CA" */
  readonly caName?: string;
}

/** The longest a serving certificate LvmSystem issues lasts (one year); rotation is docs/components.md, Certificates. */
export const MAX_CERTIFICATE_DAYS = MAX_LEAF_DAYS;

/**
 * A fresh CA and one serving certificate signed by it (src/tls/x509.ts), for
 * tests and tools that need a pair outside a cluster (in a cluster the operator issues them:
 * src/operator/certificates). The CA's key is not returned: it signs this one certificate and is
 * forgotten; the CA lasts as long as the certificate. The serving certificate is a leaf: cA false,
 * digitalSignature and keyEncipherment, serverAuth only.
 */
export async function issueAgentCertificates(o: IssueOptions = {}): Promise<AgentCertificates> {
  const now = o.now ?? new Date();
  const days = o.days ?? MAX_CERTIFICATE_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_CERTIFICATE_DAYS)
    throw new Error(`a serving certificate lasts 1 to ${MAX_CERTIFICATE_DAYS} days (asked: ${days})`);
  const serverName = o.serverName ?? AGENT_SERVER_NAME;
  const ca = await issueCa({ now, days, commonName: o.caName ?? "pulumi-lvm agent CA" });
  const leaf = await issueLeaf({
    now,
    days,
    ca,
    commonName: serverName,
    dnsNames: o.dnsNames ?? [serverName],
  });
  return { caCert: ca.cert, cert: leaf.cert, key: leaf.key };
}
