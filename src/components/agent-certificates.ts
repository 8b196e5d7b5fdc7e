import { generateKeyPairSync, randomBytes } from "node:crypto";
import forge from "node-forge";
import { AGENT_SERVER_NAME } from "../agent-api/identity";

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
  /** Validity of both certificates. @default 3650 (ten years: rotation is a replace, docs/operator.md) */
  readonly days?: number;
  /** @default AGENT_SERVER_NAME ("pulumi-lvm-agent") */
  readonly serverName?: string;
}

/**
 * A fresh CA and one serving certificate for the agents (RSA 2048, SHA-256). The keys come from
 * node:crypto; node-forge only builds and signs the X.509 structures, which node:crypto cannot.
 * The CA's key is not returned: it signs this one certificate and is forgotten, so no one (not
 * LvmSystem's state, not a node) can issue another certificate the operator would trust.
 */
export function issueAgentCertificates(o: IssueOptions = {}): AgentCertificates {
  const now = o.now ?? new Date();
  const notAfter = new Date(now.getTime() + (o.days ?? 3650) * 86_400_000);
  const serverName = o.serverName ?? AGENT_SERVER_NAME;
  const ca = rsaKeys();
  const server = rsaKeys();

  const caCert = forge.pki.createCertificate();
  caCert.publicKey = ca.publicKey;
  caCert.serialNumber = serial();
  caCert.validity.notBefore = now;
  caCert.validity.notAfter = notAfter;
  const caName = [{ name: "commonName", value: "pulumi-lvm agent CA" }];
  caCert.setSubject(caName);
  caCert.setIssuer(caName);
  caCert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  caCert.sign(ca.privateKey, forge.md.sha256.create());

  const cert = forge.pki.createCertificate();
  cert.publicKey = server.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = now;
  cert.validity.notAfter = notAfter;
  cert.setSubject([{ name: "commonName", value: serverName }]);
  cert.setIssuer(caName);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [{ type: 2, value: serverName }] },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(ca.privateKey, forge.md.sha256.create());

  return {
    caCert: forge.pki.certificateToPem(caCert),
    cert: forge.pki.certificateToPem(cert),
    key: server.pem,
  };
}

function rsaKeys(): {
  publicKey: forge.pki.rsa.PublicKey;
  privateKey: forge.pki.rsa.PrivateKey;
  pem: string;
} {
  const { publicKey, privateKey } = generateKeyPairSync("rsa", { modulusLength: 2048 });
  const pkcs1 = privateKey.export({ type: "pkcs1", format: "pem" }).toString();
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: "spki", format: "pem" }).toString()),
    privateKey: forge.pki.privateKeyFromPem(pkcs1) as forge.pki.rsa.PrivateKey,
    pem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** 16 random bytes, positive (DER integers are signed). */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString("hex");
}
