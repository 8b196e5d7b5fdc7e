import { X509Certificate, createPrivateKey } from "node:crypto";
import * as https from "node:https";
import type { AddressInfo } from "node:net";
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
