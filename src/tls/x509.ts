import {
  constants,
  createPrivateKey,
  generateKeyPair,
  privateEncrypt,
  randomBytes,
  X509Certificate,
  type KeyObject,
} from "node:crypto";
import { promisify } from "node:util";
import forge from "node-forge";

/*
 * The X.509 certificates pulumi-lvm issues itself: a CA, and leaf serving certificates it signs.
 * RSA 2048 and SHA-256; the keys and the signatures come from node:crypto (native: node-forge's own
 * RSA takes seconds on a busy machine), node-forge builds the structures, which node:crypto cannot.
 */

/** A certificate and its key, PEM (the key PKCS#8). */
export interface IssuedPair {
  readonly cert: string;
  readonly key: string;
}

/** The longest a serving (leaf) certificate pulumi-lvm issues lasts: one year. */
export const MAX_LEAF_DAYS = 365;

const DAY_MS = 86_400_000;

/** A self-signed CA: cA true with pathLen 0 (it signs leaves only), keyCertSign and cRLSign. */
export async function issueCa(o: { now: Date; days: number; commonName: string }): Promise<IssuedPair> {
  const keys = await rsaKeys();
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = o.now;
  cert.validity.notAfter = new Date(o.now.getTime() + o.days * DAY_MS);
  const name = [{ name: "commonName", value: o.commonName }];
  cert.setSubject(name);
  cert.setIssuer(name);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keys.pem };
}

/**
 * A leaf serving certificate signed by `ca`: cA false, digitalSignature and keyEncipherment,
 * serverAuth only, the DNS names asked; a fresh key every time. At most MAX_LEAF_DAYS, and never
 * past the CA's own end.
 */
export async function issueLeaf(o: {
  now: Date;
  days: number;
  ca: IssuedPair;
  commonName: string;
  dnsNames: readonly string[];
}): Promise<IssuedPair> {
  if (!Number.isInteger(o.days) || o.days < 1 || o.days > MAX_LEAF_DAYS)
    throw new Error(`a serving certificate lasts 1 to ${MAX_LEAF_DAYS} days (asked: ${o.days})`);
  const keys = await rsaKeys();
  const caCert = forge.pki.certificateFromPem(o.ca.cert);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = serial();
  cert.validity.notBefore = o.now;
  const end = o.now.getTime() + o.days * DAY_MS;
  cert.validity.notAfter = new Date(Math.min(end, caCert.validity.notAfter.getTime()));
  cert.setSubject([{ name: "commonName", value: o.commonName }]);
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: o.dnsNames.map((value) => ({ type: 2, value })) },
    { name: "authorityKeyIdentifier", keyIdentifier: caCert.generateSubjectKeyIdentifier().getBytes() },
  ]);
  cert.sign(nativeSigner(createPrivateKey(o.ca.key)), forge.md.sha256.create());
  return { cert: forge.pki.certificateToPem(cert), key: keys.pem };
}

/** What the renewal decisions read of a certificate. */
export interface CertificateFacts {
  readonly notBefore: number;
  readonly notAfter: number;
  readonly serial: string;
  readonly fingerprint256: string;
  /** The issuer's and the subject's names (as node:crypto prints them). */
  readonly issuer: string;
  readonly subject: string;
}

export function certificateFacts(pem: string): CertificateFacts {
  const c = new X509Certificate(pem);
  return {
    notBefore: Date.parse(c.validFrom),
    notAfter: Date.parse(c.validTo),
    serial: c.serialNumber,
    fingerprint256: c.fingerprint256,
    issuer: c.issuer,
    subject: c.subject,
  };
}

/** Whether `leaf` was signed by `ca` (its signature checks with the CA's public key). */
export function signedBy(leaf: string, ca: string): boolean {
  try {
    return new X509Certificate(leaf).verify(new X509Certificate(ca).publicKey);
  } catch {
    return false;
  }
}

/** Every certificate of a PEM bundle, in order. */
export function pemCertificates(bundle: string): string[] {
  return bundle.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----\r?\n?/g) ?? [];
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
