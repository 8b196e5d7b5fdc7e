/**
 * The bare host's serving certificate, made on the host by `node -e` in AgentHost's install script
 * (agent-host-script.ts) with the bundle's node-forge: a self-signed leaf (cA false, no keyCertSign,
 * serverAuth) for the node's names, valid CERTIFICATE_DAYS. The install prints it and NodeSet trusts
 * it alone for that agent: a certificate that cannot sign others, trusted as the only anchor, is
 * that one certificate pinned; nothing else the host's key signs is accepted.
 *
 * Run as `node -e CERTIFICATE_SCRIPT <node-forge dir> <names JSON> <key file> <cert file> [rotate]`.
 * It keeps the files there unless `rotate` is given or the certificate is not what this version
 * makes: missing or unreadable, a CA (older versions made one), expiring within RENEW_DAYS, or for
 * other names. It says on stderr when and why it made a new one; nothing on stdout.
 */

/** How long a serving certificate is valid. */
export const CERTIFICATE_DAYS = 365;
/** An install this close to the certificate's end makes a new one. */
export const RENEW_DAYS = 30;

export const CERTIFICATE_SCRIPT = `
const fs = require("fs");
const crypto = require("crypto");
const forge = require(process.argv[1]);
const names = [...new Set(JSON.parse(process.argv[2]))];
const [keyFile, certFile, rotate] = process.argv.slice(3);
const DAY = 24 * 3600 * 1000;
const ip = /^[0-9.]+$|:/;
function outdated() {
  if (rotate === "rotate") return "credentials rotated";
  let cert;
  try {
    fs.accessSync(keyFile);
    cert = forge.pki.certificateFromPem(fs.readFileSync(certFile, "utf8"));
  } catch {
    return "none yet";
  }
  const bc = cert.getExtension("basicConstraints");
  if (bc && bc.cA) return "the old one is a CA";
  if (cert.validity.notAfter.getTime() - Date.now() < ${RENEW_DAYS} * DAY) return "the old one ends within ${RENEW_DAYS} days";
  const san = ((cert.getExtension("subjectAltName") || {}).altNames || []).map((a) => a.ip || a.value);
  if (JSON.stringify([...san].sort()) !== JSON.stringify([...names].sort())) return "the names changed";
  return "";
}
const why = outdated();
if (!why) process.exit(0);
// The key from Node's own crypto (fast); node-forge only builds and signs the certificate.
const keyPem = crypto.generateKeyPairSync("rsa", { modulusLength: 2048 }).privateKey.export({ type: "pkcs1", format: "pem" });
const key = forge.pki.privateKeyFromPem(keyPem);
const cert = forge.pki.createCertificate();
cert.publicKey = forge.pki.setRsaPublicKey(key.n, key.e);
cert.serialNumber = "01" + forge.util.bytesToHex(forge.random.getBytesSync(15));
cert.validity.notBefore = new Date(Date.now() - 60000);
cert.validity.notAfter = new Date(Date.now() + ${CERTIFICATE_DAYS} * DAY);
const subject = [{ name: "commonName", value: "pulumi-lvm-agent " + names[0] }];
cert.setSubject(subject);
cert.setIssuer(subject);
cert.setExtensions([
  { name: "basicConstraints", cA: false, critical: true },
  { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
  { name: "extKeyUsage", serverAuth: true },
  { name: "subjectAltName", altNames: names.map((n) => (ip.test(n) ? { type: 7, ip: n } : { type: 2, value: n })) },
]);
cert.sign(key, forge.md.sha256.create());
// New files beside the old ones, then renamed over them: the agent never reads half of a pair.
fs.writeFileSync(keyFile + ".new", keyPem, { mode: 0o600 });
fs.writeFileSync(certFile + ".new", forge.pki.certificateToPem(cert));
fs.renameSync(keyFile + ".new", keyFile);
fs.renameSync(certFile + ".new", certFile);
process.stderr.write("new serving certificate (" + why + "), valid until " + cert.validity.notAfter.toISOString() + "\\n");
`;
