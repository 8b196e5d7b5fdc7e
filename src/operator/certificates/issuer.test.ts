import { X509Certificate } from "node:crypto";
import { FakeKube } from "../../../test/support/kube/fake-kube";
import { ManualClock } from "../../../test/support/kube/manual-clock";
import type { Resource } from "../../kube/resources";
import { CertificateIssuer, ROTATION_ANNOTATION } from "./issuer";
import { DEFAULT_CA_PUBLISH_MS, leafDue, renewalTime, type CertificateSettings } from "./renewal";
import { certificateFacts, pemCertificates } from "../../tls/x509";

const SECRETS: Resource = { group: "", version: "v1", plural: "secrets", kind: "Secret", namespaced: true };
const DAY = 86_400_000;
const settings: CertificateSettings = {
  leafDays: 90,
  caDays: 1095,
  rotation: 0,
  caPublishMs: DEFAULT_CA_PUBLISH_MS,
};
const targets = [
  { secret: "agent-serving", commonName: "pulumi-lvm-agent", dnsNames: ["pulumi-lvm-agent"] },
  { secret: "webhook-serving", commonName: "op-webhook.ns.svc", dnsNames: ["op-webhook.ns.svc"] },
];

jest.setTimeout(60_000);

function issuer(kube: FakeKube, clock: ManualClock, over: Partial<CertificateSettings> = {}) {
  return new CertificateIssuer({
    kube,
    clock,
    log: () => undefined,
    namespace: "ns",
    caSecret: "op-ca",
    targets,
    settings: { ...settings, ...over },
  });
}

const text = (kube: FakeKube, name: string, key: string) => {
  const secret = kube.peek<{ metadata: { name: string }; data: Record<string, string> }>(SECRETS, "ns", name);
  return Buffer.from(secret!.data[key]!, "base64").toString("utf8");
};
const writes = (kube: FakeKube) => kube.writes.map((w) => `${w.verb} ${w.object}`);

describe("CertificateIssuer under a manual clock", () => {
  const kube = new FakeKube();
  const clock = new ManualClock();
  const t0 = clock.now();
  let firstSerial = "";

  test("first run: a CA Secret and both serving Secrets, leaves with no CA bit, 90 days, signed by the CA", async () => {
    await issuer(kube, clock).ensure();
    expect(writes(kube)).toEqual([
      "CREATE Secret ns/op-ca",
      "CREATE Secret ns/agent-serving",
      "CREATE Secret ns/webhook-serving",
    ]);
    const ca = new X509Certificate(text(kube, "op-ca", "tls.crt"));
    expect(ca.ca).toBe(true);
    for (const t of targets) {
      const leaf = new X509Certificate(text(kube, t.secret, "tls.crt"));
      expect(leaf.ca).toBe(false);
      expect(leaf.keyUsage).toEqual(["1.3.6.1.5.5.7.3.1"]); // serverAuth only
      expect(leaf.checkHost(t.dnsNames[0]!)).toBe(t.dnsNames[0]);
      expect(leaf.verify(ca.publicKey)).toBe(true);
      expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBe(90 * DAY);
      expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBeLessThanOrEqual(365 * DAY);
      expect(text(kube, t.secret, "ca.crt")).toBe(text(kube, "op-ca", "tls.crt"));
      expect(text(kube, t.secret, "tls.key")).toMatch(/BEGIN PRIVATE KEY/);
    }
    firstSerial = certificateFacts(text(kube, "agent-serving", "tls.crt")).serial;
  });

  test("before two thirds of 90 days: nothing is written", async () => {
    kube.calls.length = 0;
    await clock.advance(60 * DAY - 60_000);
    const next = await issuer(kube, clock).ensure();
    expect(writes(kube)).toEqual([]);
    expect(next).toBe(t0 + 60 * DAY); // the leaves' renewal time, to the millisecond
  });

  test("at two thirds: both leaves re-issued IN PLACE (patched, not created), new serial, new key", async () => {
    const oldKey = text(kube, "agent-serving", "tls.key");
    await clock.advance(60_000);
    await issuer(kube, clock).ensure();
    expect(writes(kube)).toEqual(["PATCH Secret ns/agent-serving", "PATCH Secret ns/webhook-serving"]);
    expect(certificateFacts(text(kube, "agent-serving", "tls.crt")).serial).not.toBe(firstSerial);
    expect(text(kube, "agent-serving", "tls.key")).not.toBe(oldKey);
  });

  test("a raised rotation re-issues every leaf at once, and records it", async () => {
    kube.calls.length = 0;
    const before = certificateFacts(text(kube, "agent-serving", "tls.crt")).serial;
    await issuer(kube, clock, { rotation: 1 }).ensure();
    expect(writes(kube)).toEqual(["PATCH Secret ns/agent-serving", "PATCH Secret ns/webhook-serving"]);
    expect(certificateFacts(text(kube, "agent-serving", "tls.crt")).serial).not.toBe(before);
    const s = kube.peek<{ metadata: { name: string; annotations: Record<string, string> } }>(
      SECRETS,
      "ns",
      "agent-serving",
    )!;
    expect(s.metadata.annotations[ROTATION_ANNOTATION]).toBe("1");
    kube.calls.length = 0;
    await issuer(kube, clock, { rotation: 1 }).ensure();
    expect(writes(kube)).toEqual([]);
  });

  test("the CA at two thirds of its life: a new CA, ca.crt holds both, leaves move to it only after publication", async () => {
    const oldCa = text(kube, "op-ca", "tls.crt");
    await clock.advance(renewalTime(certificateFacts(oldCa)) - clock.now());
    kube.calls.length = 0;
    await issuer(kube, clock, { rotation: 1 }).ensure();
    const newCa = text(kube, "op-ca", "tls.crt");
    expect(newCa).not.toBe(oldCa);
    expect(text(kube, "op-ca", "previous.crt")).toBe(oldCa);
    // Only ca.crt changes now: the leaves stay signed by the old CA, which every reader trusts.
    expect(pemCertificates(text(kube, "agent-serving", "ca.crt"))).toEqual([newCa, oldCa]);
    const leaf = new X509Certificate(text(kube, "agent-serving", "tls.crt"));
    expect(leaf.verify(new X509Certificate(oldCa).publicKey)).toBe(true);
    await clock.advance(DEFAULT_CA_PUBLISH_MS);
    kube.calls.length = 0;
    await issuer(kube, clock, { rotation: 1 }).ensure();
    expect(writes(kube)).toEqual(["PATCH Secret ns/agent-serving", "PATCH Secret ns/webhook-serving"]);
    const moved = new X509Certificate(text(kube, "agent-serving", "tls.crt"));
    expect(moved.verify(new X509Certificate(newCa).publicKey)).toBe(true);
    // Once the old CA has expired, ca.crt drops it.
    await clock.advance(certificateFacts(oldCa).notAfter - clock.now() + 1);
    await issuer(kube, clock, { rotation: 1 }).ensure();
    expect(pemCertificates(text(kube, "agent-serving", "ca.crt"))).toEqual([newCa]);
  });
});

describe("leafDue", () => {
  const ca = certificateFactsOf(0, 1095);
  const leaf = certificateFactsOf(0, 90);
  test("reasons, in order", () => {
    expect(leafDue({ rotation: 0 }, { current: ca }, 0, settings)).toBe("missing");
    expect(
      leafDue({ leaf, signedBy: ca, rotation: 0 }, { current: ca }, 0, { ...settings, rotation: 2 }),
    ).toBe("rotation");
    expect(leafDue({ leaf, signedBy: ca, rotation: 0 }, { current: ca }, 60 * DAY, settings)).toBe("due");
    expect(
      leafDue({ leaf, signedBy: ca, rotation: 0 }, { current: ca }, 60 * DAY - 1, settings),
    ).toBeUndefined();
    expect(leafDue({ leaf, rotation: 0 }, { current: ca }, 1, settings)).toBe("untrusted");
  });
});

function certificateFactsOf(fromDay: number, days: number) {
  const serial = `${fromDay}-${days}`;
  return {
    notBefore: fromDay * DAY,
    notAfter: (fromDay + days) * DAY,
    serial,
    fingerprint256: serial,
    issuer: "CN=x",
    subject: "CN=x",
  };
}
