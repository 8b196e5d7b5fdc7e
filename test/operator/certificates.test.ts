/**
 * The operator issues the serving certificates against a real API server, with exactly the RBAC
 * LvmSystem grants it for that (issuanceRules: create Secrets, the rest by name; its webhook
 * configuration by name): the CA Secret, the agents' and the webhook's serving Secrets, the
 * webhook's caBundle under its own field manager (Pulumi's field left alone). A raised
 * --certificate-rotation re-issues them IN PLACE (same uid, new serial), and a TLS server following
 * the Secret's files (the operator's webhook server, src/kube/serving-certificate.ts, as the agent
 * uses it) serves the new certificate with no restart, trusted by a client pinned to the served ca.crt.
 */
import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import * as tls from "node:tls";
import { issuanceRules, type OperatorIssuance } from "../../src/components/certificate-settings";
import { systemClock } from "../../src/kube/clock";
import { createWebhookServer } from "../../src/operator/admission/server";
import type { AdmissionReads } from "../../src/operator/admission/review";
import { startControlPlane, type ControlPlane, type Json } from "../env/cluster";
import { SecretVolume } from "../support/tls/secret-volume";
import { AGENT_NAMESPACE, eventually, must, prepareCluster } from "./env";
import { startOperatorProcess, type OperatorProcess } from "./operator-process";

jest.setTimeout(300_000);

const VWC = "lvm-system-lvm-operator";
const issuance: OperatorIssuance = {
  caSecret: "lvm-operator-ca",
  agentSecret: "lvm-agent-serving",
  webhook: {
    secret: "lvm-operator-webhook-serving",
    dnsName: "lvm-operator-webhook.lvm-system.svc",
    configuration: VWC,
  },
  validityDays: 90,
  rotation: 0,
};
const flags = (rotation: number) => [
  "--issue-certificates",
  issuance.caSecret,
  "--issue-agent-secret",
  issuance.agentSecret!,
  "--issue-webhook-secret",
  issuance.webhook!.secret,
  "--issue-webhook-dns-name",
  issuance.webhook!.dnsName,
  "--issue-webhook-configuration",
  VWC,
  "--certificate-rotation",
  String(rotation),
];

let cp: ControlPlane;
let op: OperatorProcess | undefined;
let dir: string;
beforeAll(async () => {
  cp = await startControlPlane();
  await prepareCluster(cp);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-certificates-"));
  const [, , ns, sa] = cp.identities.operator.username.split(":");
  const rules = issuanceRules(issuance);
  const rbac = "/apis/rbac.authorization.k8s.io/v1";
  const subjects = [{ kind: "ServiceAccount", namespace: ns, name: sa }];
  await must(cp, "POST", `${rbac}/namespaces/${AGENT_NAMESPACE}/roles`, {
    metadata: { name: "certificates", namespace: AGENT_NAMESPACE },
    rules: rules.namespaced,
  });
  await must(cp, "POST", `${rbac}/namespaces/${AGENT_NAMESPACE}/rolebindings`, {
    metadata: { name: "certificates" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "certificates" },
    subjects,
  });
  await must(cp, "POST", `${rbac}/clusterroles`, {
    metadata: { name: "certificates" },
    rules: rules.clusterWide,
  });
  await must(cp, "POST", `${rbac}/clusterrolebindings`, {
    metadata: { name: "certificates" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "certificates" },
    subjects,
  });
  // The configuration as Pulumi creates it: no caBundle, its own field manager; a webhook that
  // matches nothing of this test.
  await must(
    cp,
    "POST",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations?fieldManager=pulumi-kubernetes",
    {
      metadata: { name: VWC },
      webhooks: [
        {
          name: "lvmnodesets.lvm.topolvm.io",
          clientConfig: { service: { namespace: AGENT_NAMESPACE, name: "lvm-operator-webhook", port: 443 } },
          rules: [
            {
              apiGroups: ["example.invalid"],
              apiVersions: ["v1"],
              operations: ["CREATE"],
              resources: ["nothing"],
            },
          ],
          sideEffects: "None",
          admissionReviewVersions: ["v1"],
          failurePolicy: "Ignore",
        },
      ],
    },
  );
}, 300_000);

afterAll(async () => {
  op?.cleanup();
  await cp?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

const secret = async (name: string) =>
  (await cp.request("GET", `/api/v1/namespaces/${AGENT_NAMESPACE}/secrets/${name}`)).body as Json;
const pem = (s: Json, key: string) => Buffer.from(s.data[key], "base64").toString("utf8");

async function runOperator(rotation: number, until: () => Promise<unknown>): Promise<void> {
  op = startOperatorProcess(cp, { identity: `op-${rotation}`, agentToken: "unused", args: flags(rotation) });
  try {
    await eventually("the operator's certificates", until, 120_000, 200);
  } finally {
    op.child.kill("SIGTERM");
    await op.exited;
    op.cleanup();
    op = undefined;
  }
}

/** The certificate a TLS server presents, verified against `ca` for the agents' name. */
function verifiedFingerprint(port: number, ca: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: "127.0.0.1", port, ca, servername: "pulumi-lvm-agent" }, () => {
      const fp = socket.getPeerX509Certificate()?.fingerprint256 ?? "";
      socket.end();
      resolve(fp);
    });
    socket.on("error", reject);
  });
}

test("issued, caBundle set under its own manager; a raised rotation re-issues in place and the served certificate follows without a restart", async () => {
  await runOperator(
    0,
    async () =>
      (await secret(issuance.agentSecret!))?.data?.["tls.crt"] &&
      (await secret(issuance.webhook!.secret))?.data,
  );
  const agent = await secret(issuance.agentSecret!);
  expect(agent.type).toBe("kubernetes.io/tls");
  const leaf = new X509Certificate(pem(agent, "tls.crt"));
  expect(leaf.ca).toBe(false);
  expect(Date.parse(leaf.validTo) - Date.parse(leaf.validFrom)).toBe(90 * 86_400_000);
  expect(leaf.verify(new X509Certificate(pem(agent, "ca.crt")).publicKey)).toBe(true);
  // caBundle: the webhook Secret's ca.crt, owned by the operator's field manager only.
  const vwcPath = `/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/${VWC}`;
  const vwc = await eventually("caBundle set", async () => {
    const v = (await cp.request("GET", vwcPath)).body as Json;
    return v.webhooks[0].clientConfig.caBundle ? v : undefined;
  });
  const webhookSecret = await secret(issuance.webhook!.secret);
  expect(vwc.webhooks[0].clientConfig.caBundle).toBe(webhookSecret.data["ca.crt"]);
  const managers = (vwc.metadata.managedFields as Json[]).map((m) => m.manager);
  expect(managers).toEqual(expect.arrayContaining(["pulumi-kubernetes", "pulumi-lvm-operator"]));
  const operatorFields = JSON.stringify(
    vwc.metadata.managedFields.find((m: Json) => m.manager === "pulumi-lvm-operator").fieldsV1,
  );
  expect(operatorFields).toContain("f:caBundle");
  expect(operatorFields).not.toContain("f:failurePolicy");

  // The agent's files, as the kubelet lays out the Secret volume, followed by a running server.
  const volume = new SecretVolume(path.join(dir, "volume"));
  volume.write({ cert: Buffer.from(pem(agent, "tls.crt")), key: Buffer.from(pem(agent, "tls.key")) });
  const server = createWebhookServer({
    certDir: volume.dir,
    reads: {} as AdmissionReads,
    clock: systemClock,
    log: () => undefined,
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", () => resolve()));
  const port = (server.address() as AddressInfo).port;
  try {
    expect(await verifiedFingerprint(port, pem(agent, "ca.crt"))).toBe(leaf.fingerprint256);

    // A raised rotation: the operator re-issues in place.
    await runOperator(1, async () => {
      const s = await secret(issuance.agentSecret!);
      return s.metadata.annotations?.["lvm.topolvm.io/certificate-rotation"] === "1";
    });
    const rotated = await secret(issuance.agentSecret!);
    expect(rotated.metadata.uid).toBe(agent.metadata.uid);
    const next = new X509Certificate(pem(rotated, "tls.crt"));
    expect(next.serialNumber).not.toBe(leaf.serialNumber);
    expect(pem(rotated, "tls.key")).not.toBe(pem(agent, "tls.key"));
    volume.write({ cert: Buffer.from(pem(rotated, "tls.crt")), key: Buffer.from(pem(rotated, "tls.key")) });
    const served = await eventually(
      "the rotated certificate served",
      async () => {
        const fp = await verifiedFingerprint(port, pem(rotated, "ca.crt"));
        return fp === next.fingerprint256 ? fp : undefined;
      },
      15_000,
      200,
    );
    expect(served).toBe(next.fingerprint256);
    expect(server.listening).toBe(true); // the same server, never restarted
  } finally {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
