/**
 * A rotated serving certificate is served without a restart: the agent runs with --tls-cert/--tls-key
 * in a Secret volume laid out as the kubelet lays it out; the volume is updated the kubelet's way
 * (a new timestamped directory, one atomic `..data` link swap) and the next TLS connection gets the
 * new certificate from the same process. A half-written pair (a key that does not match) is not
 * taken: the last good certificate stays.
 */
import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import { makeTls, requireHostTier, Scratch, startAgent, writeTokenFile } from "./harness";
import { SecretVolume, servedFingerprint, waitForServed } from "../support/tls/secret-volume";

jest.setTimeout(120_000);

let scratch: Scratch;
beforeAll(() => {
  requireHostTier();
  scratch = new Scratch("tls-rotation");
  writeTokenFile(scratch.path("tokens"), { op: { user: "operator", node: "*" } });
});
afterAll(() => scratch?.cleanup());

const fingerprint = (file: string) => new X509Certificate(fs.readFileSync(file)).fingerprint256;

test("the agent serves a certificate rotated in its Secret volume, with no restart", async () => {
  fs.mkdirSync(scratch.path("a"));
  fs.mkdirSync(scratch.path("b"));
  const a = makeTls(scratch.path("a"));
  const b = makeTls(scratch.path("b"));
  const volume = new SecretVolume(scratch.path("volume"));
  volume.write({ cert: fs.readFileSync(a.cert), key: fs.readFileSync(a.key) });

  const agent = await startAgent({
    node: "node-tls",
    devices: [scratch.loop()],
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
    extraArgs: ["--tls-cert", volume.certFile, "--tls-key", volume.keyFile],
  });
  try {
    const port = Number(new URL(agent.url).port);
    expect(await servedFingerprint(port)).toBe(fingerprint(a.cert));
    // When it expires, in the log from the start.
    expect(agent.logs.find((e) => e.msg === "serving certificate")).toMatchObject({
      notAfter: new Date(new X509Certificate(fs.readFileSync(a.cert)).validTo).toISOString(),
      fingerprint256: fingerprint(a.cert),
    });

    volume.write({ cert: fs.readFileSync(b.cert), key: fs.readFileSync(b.key) });
    expect(await waitForServed(port, fingerprint(b.cert), 15_000)).toBe(fingerprint(b.cert));
    expect(agent.child.exitCode).toBeNull();
    await agent.waitForLog((e) => e.msg === "serving certificate reloaded");

    // A certificate with another pair's key: refused, B stays, and the agent says why.
    volume.write({ cert: fs.readFileSync(a.cert), key: fs.readFileSync(b.key) });
    await agent.waitForLog((e) => e.msg === "serving certificate not reloaded");
    expect(await servedFingerprint(port)).toBe(fingerprint(b.cert));
  } finally {
    await agent.stop();
  }
});

test("--tls-await: started before its Secret exists, the agent refuses every handshake, then serves the certificate when the volume is filled, with no restart", async () => {
  fs.mkdirSync(scratch.path("c"));
  const c = makeTls(scratch.path("c"));
  // An optional Secret volume before its Secret exists: an empty directory.
  const volume = new SecretVolume(scratch.path("awaited"));
  const agent = await startAgent({
    node: "node-tls-await",
    devices: [scratch.loop()],
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
    extraArgs: ["--tls-cert", volume.certFile, "--tls-key", volume.keyFile, "--tls-await"],
  });
  try {
    const port = Number(new URL(agent.url).port);
    expect(agent.logs.find((e) => e.msg === "waiting for the serving certificate")).toMatchObject({
      certFile: volume.certFile,
    });
    await expect(servedFingerprint(port)).rejects.toThrow();

    volume.write({ cert: fs.readFileSync(c.cert), key: fs.readFileSync(c.key) });
    expect(await waitForServed(port, fingerprint(c.cert), 15_000)).toBe(fingerprint(c.cert));
    expect(agent.child.exitCode).toBeNull();
    await agent.waitForLog((e) => e.msg === "serving certificate reloaded");
  } finally {
    await agent.stop();
  }
});

test("without --tls-await a missing certificate fails the start, naming the flag and the file", async () => {
  const missing = scratch.path("missing/tls.crt");
  await expect(
    startAgent({
      node: "node-tls-missing",
      devices: [scratch.loop()],
      ...scratch.agentFiles(),
      auth: { tokenFile: scratch.path("tokens") },
      extraArgs: ["--tls-cert", missing, "--tls-key", scratch.path("missing/tls.key")],
    }),
  ).rejects.toThrow(/--tls-cert.*missing\/tls\.crt|missing\/tls\.crt.*--tls-cert/s);
});
