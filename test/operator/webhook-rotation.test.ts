/**
 * The operator's webhook server serves a certificate rotated in its Secret volume with no restart,
 * whether or not the client sends SNI (the volume is updated the kubelet's way: a new timestamped
 * directory and one atomic `..data` link swap). No API server: only the TLS handshake is looked at.
 */
import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { systemClock } from "../../src/kube/clock";
import { createWebhookServer } from "../../src/operator/admission/server";
import type { AdmissionReads } from "../../src/operator/admission/review";
import { makeTls } from "../agent/tls-files";
import { SecretVolume, servedFingerprint, waitForServed } from "../support/tls/secret-volume";

let dir: string;
beforeAll(() => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-webhook-rotation-"));
});
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

const fingerprint = (file: string) => new X509Certificate(fs.readFileSync(file)).fingerprint256;

test("a new connection gets the rotated certificate, with SNI and without", async () => {
  for (const name of ["a", "b"]) fs.mkdirSync(path.join(dir, name));
  const a = makeTls(path.join(dir, "a"));
  const b = makeTls(path.join(dir, "b"));
  const volume = new SecretVolume(path.join(dir, "volume"));
  volume.write({ cert: fs.readFileSync(a.cert), key: fs.readFileSync(a.key) });
  const logs: Array<Record<string, unknown>> = [];
  const server = createWebhookServer({
    certDir: volume.dir,
    reads: {} as AdmissionReads, // no review is sent
    clock: systemClock,
    log: (e) => logs.push(e),
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  try {
    expect(await servedFingerprint(port)).toBe(fingerprint(a.cert));
    volume.write({ cert: fs.readFileSync(b.cert), key: fs.readFileSync(b.key) });
    expect(await waitForServed(port, fingerprint(b.cert), 15_000)).toBe(fingerprint(b.cert));
    expect(await servedFingerprint(port, "127.0.0.1", "localhost")).toBe(fingerprint(b.cert));
    expect(logs).toContainEqual(expect.objectContaining({ msg: "serving certificate reloaded" }));
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
