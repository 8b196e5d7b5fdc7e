import { X509Certificate, createPrivateKey } from "node:crypto";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
import forge from "node-forge";
import { issueAgentCertificates } from "./agent-certificates";

// RSA key generation takes a while on a loaded machine.
jest.setTimeout(60_000);

let issued: Awaited<ReturnType<typeof issueAgentCertificates>>;
beforeAll(async () => {
  issued = await issueAgentCertificates();
});

test("a CA, and a serving certificate for pulumi-lvm-agent that it signed, with its key", async () => {
  const ca = new X509Certificate(issued.caCert);
  const cert = new X509Certificate(issued.cert);
  expect(ca.ca).toBe(true);
  expect(cert.ca).toBe(false);
  expect(cert.checkIssued(ca)).toBe(true);
  expect(cert.verify(ca.publicKey)).toBe(true);
  expect(cert.checkHost("pulumi-lvm-agent")).toBe("pulumi-lvm-agent");
  expect(cert.checkHost("other")).toBeUndefined();
  expect(cert.checkPrivateKey(createPrivateKey(issued.key))).toBe(true);
  // Two issues never share a CA: a certificate from one is not trusted by the other's.
  expect(new X509Certificate((await issueAgentCertificates()).cert).checkIssued(ca)).toBe(false);
});

test("node:tls accepts it for the name against that CA only", async () => {
  const server = https.createServer({ cert: issued.cert, key: issued.key }, (_req, res) => res.end("ok"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  const port = (server.address() as AddressInfo).port;
  const get = (opts: https.RequestOptions) =>
    new Promise<string>((resolve, reject) => {
      https
        .get({ host: "127.0.0.1", port, path: "/", ...opts }, (res) => {
          res.resume();
          res.on("end", () => resolve(`HTTP ${res.statusCode}`));
        })
        .on("error", (e) => reject(e));
    });
  try {
    expect(await get({ ca: issued.caCert, servername: "pulumi-lvm-agent" })).toBe("HTTP 200");
    await expect(
      get({ ca: (await issueAgentCertificates()).caCert, servername: "pulumi-lvm-agent" }),
    ).rejects.toThrow(/self-signed|unable to (get|verify)/i);
    await expect(get({ ca: issued.caCert, servername: "another-name" })).rejects.toThrow(
      /altnames|Hostname/i,
    );
  } finally {
    server.close();
  }
});

describe("the serving certificate is a leaf with a bounded lifetime", () => {
  const DAY = 86_400_000;
  const facts = (pem: string) => {
    const cert = forge.pki.certificateFromPem(pem);
    const ext = (name: string) => cert.getExtension(name) as Record<string, unknown> | undefined;
    return {
      days: (cert.validity.notAfter.getTime() - cert.validity.notBefore.getTime()) / DAY,
      basicConstraints: ext("basicConstraints"),
      keyUsage: ext("keyUsage"),
      extKeyUsage: ext("extKeyUsage"),
      altNames: ((ext("subjectAltName")?.altNames ?? []) as Array<{ value: string }>).map((n) => n.value),
    };
  };

  test("by default: one year at most, cA false, no keyCertSign, serverAuth only, the server name as SAN", () => {
    const leaf = facts(issued.cert);
    expect(leaf.days).toBeLessThanOrEqual(365);
    expect(leaf.days).toBeGreaterThan(300);
    expect(leaf.basicConstraints).toMatchObject({ cA: false, critical: true });
    expect(leaf.keyUsage).toMatchObject({ digitalSignature: true, critical: true });
    expect(leaf.keyUsage?.keyCertSign).toBeFalsy();
    expect(leaf.keyUsage?.cRLSign).toBeFalsy();
    expect(leaf.extKeyUsage).toMatchObject({ serverAuth: true });
    expect(leaf.extKeyUsage?.clientAuth).toBeFalsy();
    expect(leaf.altNames).toEqual(["pulumi-lvm-agent"]);
    // The CA that signed it lives no longer than it (its key is gone: it signs nothing else).
    expect(facts(issued.caCert).days).toBeLessThanOrEqual(365);
    expect(new X509Certificate(issued.caCert).ca).toBe(true);
  });

  test("days and DNS names as asked; more than a year is refused", async () => {
    const now = new Date("2026-12-06T00:00:00Z");
    const c = await issueAgentCertificates({
      now,
      days: 30,
      serverName: "w.ns.svc",
      dnsNames: ["w.ns.svc", "w.ns.svc.cluster.local"],
    });
    const leaf = facts(c.cert);
    expect(leaf.days).toBe(30);
    expect(forge.pki.certificateFromPem(c.cert).validity.notBefore).toEqual(now);
    expect(leaf.altNames).toEqual(["w.ns.svc", "w.ns.svc.cluster.local"]);
    expect(new X509Certificate(c.cert).checkHost("w.ns.svc.cluster.local")).toBe("w.ns.svc.cluster.local");
    await expect(issueAgentCertificates({ days: 366 })).rejects.toThrow(
      "a serving certificate lasts 1 to 365 days (asked: 366)",
    );
    await expect(issueAgentCertificates({ days: 0 })).rejects.toThrow("1 to 365 days (asked: 0)");
  });
});
