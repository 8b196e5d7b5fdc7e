import { constants, generateKeyPair, privateEncrypt, randomBytes, type KeyObject } from "node:crypto";
import { promisify } from "node:util";
import forge from "node-forge";
import { AGENT_SERVER_NAME } from "../agent-api/auth";

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
export const MAX_CERTIFICATE_DAYS = 365;

/**
 * A fresh CA and one serving certificate for the agents (RSA 2048, SHA-256). The keys and the
 * signatures come from node:crypto (native: node-forge's own RSA takes seconds on a busy machine);
 * node-forge builds the X.509 structures, which node:crypto cannot.
 * The CA's key is not returned: it signs this one certificate and is forgotten, so no one (not
 * LvmSystem's state, not a node) can issue another certificate the operator would trust; the CA
 * lasts as long as the certificate. The serving certificate is a leaf: cA false, digitalSignature
 * and keyEncipherment, serverAuth only.
 */
export async function issueAgentCertificates(o: IssueOptions = {}): Promise<AgentCertificates> {
  const now = o.now ?? new Date();
  const days = o.days ?? MAX_CERTIFICATE_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_CERTIFICATE_DAYS)
    throw new Error(`a serving certificate lasts 1 to ${MAX_CERTIFICATE_DAYS} days (asked: ${days})`);
  const notAfter = new Date(now.getTime() + days * 86_400_000);
  const serverName = o.serverName ?? AGENT_SERVER_NAME;
  const dnsNames = o.dnsNames ?? [serverName];
  // Both keys at once, off the event loop (RSA key generation takes a second on a busy machine).
  const [ca, server] = await Promise.all([rsaKeys(), rsaKeys()]);

  const caCert = forge.pki.createCertificate();
  caCert.publicKey = ca.publicKey;
  caCert.serialNumber = serial();
  caCert.validity.notBefore = now;
  caCert.validity.notAfter = notAfter;
  const caName = [{ name: "commonName", value: o.caName ?? "pulumi-lvm agent CA" }];
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
    { name: "subjectAltName", altNames: dnsNames.map((value) => ({ type: 2, value })) },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(ca.privateKey, forge.md.sha256.create());

  return {
    caCert: forge.pki.certificateToPem(caCert),
    cert: forge.pki.certificateToPem(cert),
    key: server.pem,
  };
}

async function rsaKeys(): Promise<{
  publicKey: forge.pki.rsa.PublicKey;
  privateKey: forge.pki.rsa.PrivateKey;
  pem: string;
}> {
  const { publicKey, privateKey } = await promisify(generateKeyPair)("rsa", { modulusLength: 2048 });
  return {
    publicKey: forge.pki.publicKeyFromPem(publicKey.export({ type: "spki", format: "pem" }).toString()),
    privateKey: nativeSigner(privateKey),
    pem: privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
  };
}

/** DER prefix of a PKCS#1 v1.5 DigestInfo for SHA-256 (RFC 8017, section 9.2, note 1). */
const SHA256_DIGEST_INFO = Buffer.from("3031300d060960864801650304020105000420", "hex");

/**
 * What forge's `certificate.sign` needs of a key (`sign(md)`: a PKCS#1 v1.5 signature of the
 * digest, as a binary string), done by node:crypto: DigestInfo(SHA-256, digest) under the private
 * key with PKCS#1 type 1 padding is exactly RSASSA-PKCS1-v1_5.
 */
function nativeSigner(key: KeyObject): forge.pki.rsa.PrivateKey {
  return {
    sign(md: forge.md.MessageDigest) {
      const digest = Buffer.from(md.digest().getBytes(), "binary");
      const signature = privateEncrypt(
        { key, padding: constants.RSA_PKCS1_PADDING },
        Buffer.concat([SHA256_DIGEST_INFO, digest]),
      );
      return signature.toString("binary");
    },
  } as unknown as forge.pki.rsa.PrivateKey;
}

/** 16 random bytes, positive (DER integers are signed). */
function serial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f;
  return bytes.toString("hex");
}
