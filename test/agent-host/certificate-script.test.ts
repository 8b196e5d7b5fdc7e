import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as forge from "node-forge";
import { CERTIFICATE_SCRIPT } from "../../src/components/agent-host-certificate";

/**
 * The serving certificate's script as the install runs it on the host (`node -e`, the real
 * node-forge): when it keeps the certificate there and when it makes a new one.
 */
const FORGE = path.dirname(require.resolve("node-forge/package.json"));
const NAMES = ["edge-1", "10.0.0.11", "localhost", "127.0.0.1"];
let dir: string;
beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), "agent-cert-"))));
afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

const key = () => path.join(dir, "tls.key");
const crt = () => path.join(dir, "tls.crt");
function run(names = NAMES, rotate?: "rotate") {
  const r = spawnSync(
    process.execPath,
    ["-e", CERTIFICATE_SCRIPT, FORGE, JSON.stringify(names), key(), crt(), ...(rotate ? [rotate] : [])],
    { encoding: "utf8" },
  );
  expect(r.status).toBe(0);
  expect(r.stdout).toBe("");
  return r.stderr;
}
const pem = () => fs.readFileSync(crt(), "utf8");

/** A certificate as versions before this one made it: a CA for 10 years. */
function oldStyle(days: number, ca: boolean): void {
  const keys = forge.pki.rsa.generateKeyPair(1024);
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = "01";
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + days * 86_400_000);
  cert.setSubject([{ name: "commonName", value: "old" }]);
  cert.setIssuer([{ name: "commonName", value: "old" }]);
  cert.setExtensions([
    { name: "basicConstraints", cA: ca },
    {
      name: "subjectAltName",
      altNames: NAMES.map((n) => (/^[0-9.]+$/.test(n) ? { type: 7, ip: n } : { type: 2, value: n })),
    },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  fs.writeFileSync(key(), forge.pki.privateKeyToPem(keys.privateKey));
  fs.writeFileSync(crt(), forge.pki.certificateToPem(cert));
}

test("none yet: a leaf for 365 days, key mode 600; run again: kept", () => {
  expect(run()).toMatch(/new serving certificate \(none yet\), valid until /);
  const first = pem();
  const cert = forge.pki.certificateFromPem(first);
  expect(cert.getExtension("basicConstraints")).toMatchObject({ cA: false, critical: true });
  expect(cert.getExtension("keyUsage")).toMatchObject({ digitalSignature: true });
  expect(cert.getExtension("keyUsage")).not.toMatchObject({ keyCertSign: true });
  expect(cert.getExtension("extKeyUsage")).toMatchObject({ serverAuth: true });
  expect(Math.round((cert.validity.notAfter.getTime() - Date.now()) / 86_400_000)).toBe(365);
  expect(fs.statSync(key()).mode & 0o777).toBe(0o600);
  expect(run()).toBe("");
  expect(pem()).toBe(first);
});

test.each([
  ["a CA (as older versions made)", () => oldStyle(3650, true), "the old one is a CA"],
  ["a leaf ending within 30 days", () => oldStyle(20, false), "the old one ends within 30 days"],
])("the old certificate is %s: a new one", (_what, make, why) => {
  make();
  const old = pem();
  expect(run()).toContain(`new serving certificate (${why})`);
  expect(pem()).not.toBe(old);
});

test("other names (a changed agentUrl) or rotate: a new one", () => {
  run();
  const first = pem();
  expect(run([...NAMES, "agents.example"])).toContain("new serving certificate (the names changed)");
  const second = pem();
  expect(second).not.toBe(first);
  expect(run([...NAMES, "agents.example"], "rotate")).toContain(
    "new serving certificate (credentials rotated)",
  );
  expect(pem()).not.toBe(second);
});
