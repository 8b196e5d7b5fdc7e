import { LvmSystem } from "./lvm-system";
import { LVMNODE_WRITERS_MESSAGE, NOT_CONTROLLED_MESSAGE } from "../agent-api/admission";
import { lvmSystemUnderMocks } from "../../test/support/components/lvm-system-fixture";
import { find, runFailingProgram, runProgram } from "../../test/support/components/pulumi-mocks";

const SECRET = "kubernetes:core/v1:Secret";
const VWC = "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration";
const VAP = "kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";

const args = lvmSystemUnderMocks("ghcr.io/acme/pulumi-lvm-agent:0.1.0");

describe("LvmSystem admission", () => {
  test("by default: the operator issues the webhook's certificate and sets caBundle (Pulumi names none), only the system's namespace", async () => {
    const recorded = await runProgram(() => new LvmSystem("lvm", args()));
    expect(recorded.filter((r) => r.type === SECRET)).toEqual([]);
    const vwc = find(recorded, VWC, "lvm-operator-webhook").inputs;
    // Pulumi waits for the caBundle the operator sets: nothing is created against the webhook before.
    expect(vwc.metadata).toEqual({
      name: "lvm-system-lvm-operator",
      annotations: { "pulumi.com/waitFor": "jsonpath={.webhooks[0].clientConfig.caBundle}" },
    });
    expect(vwc.webhooks.map((w: { name: string }) => w.name)).toEqual([
      "lvmnodesets.lvm.topolvm.io",
      "lvmnodes.lvm.topolvm.io",
      "lvmnodeset-deletions.lvm.topolvm.io",
      "deletion-guards.lvm.topolvm.io",
      "lvmnode-approvals.lvm.topolvm.io",
    ]);
    // Create and spec changes: Fail (no unchecked set); a set's deletion: Ignore (no operator, no
    // refusal); the deletion guard's: Fail (passed unchecked, destroy would delete TopoLVM next).
    expect(vwc.webhooks.map((w: { failurePolicy: string }) => w.failurePolicy)).toEqual([
      "Fail",
      "Fail",
      "Ignore",
      "Fail",
      "Fail",
    ]);
    expect(
      vwc.webhooks.map((w: { rules: Array<{ operations: string[] }> }) => w.rules[0]!.operations),
    ).toEqual([["CREATE", "UPDATE"], ["CREATE", "UPDATE"], ["DELETE"], ["DELETE"], ["CREATE", "UPDATE"]]);
    // The Topolvm component's deletion guard: ConfigMaps with the label, in the system's namespace.
    expect(vwc.webhooks[3].rules[0].resources).toEqual(["configmaps"]);
    expect(vwc.webhooks[3].objectSelector).toEqual({
      matchLabels: { "lvm.topolvm.io/deletion-guard": "true" },
    });
    expect(vwc.webhooks[2].rules[0].resources).toEqual(["lvmnodesets"]);
    expect(vwc.webhooks[2].clientConfig.service.path).toBe("/validate/lvmnodesets");
    // Only a set with deletionPolicy Delete reaches the webhook: Retain is never refused.
    expect(vwc.webhooks[2].matchConditions[0].expression).toContain(
      "oldObject.spec.template.deletionPolicy == 'Delete'",
    );
    for (const w of vwc.webhooks) {
      expect(w).toMatchObject({
        sideEffects: "None",
        timeoutSeconds: 10,
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "lvm-system" } },
        clientConfig: {
          service: { namespace: "lvm-system", name: "lvm-operator-webhook", port: 443 },
        },
      });
      // the operator's field (server-side apply, src/operator/certificates/issuer.ts): never Pulumi's
      expect(w.clientConfig.caBundle).toBeUndefined();
      expect(w.matchConditions).toContainEqual({
        name: "not-the-operator",
        expression:
          w.name === "lvmnodes.lvm.topolvm.io"
            ? "!(request.userInfo.username in ['system:serviceaccount:lvm-system:lvm-operator', 'system:serviceaccount:kube-system:generic-garbage-collector', 'system:kube-controller-manager'])"
            : "request.userInfo.username != 'system:serviceaccount:lvm-system:lvm-operator'",
      });
    }
    // An LVMNode's ownerReferences changed without its spec reaches the webhook too.
    expect(vwc.webhooks[1].matchConditions[0].expression).toContain("ownerReferences");
    const policy = find(recorded, VAP, "lvm-operator-lvmnode-owner").inputs;
    expect(policy.spec.validations[0].message).toBe(NOT_CONTROLLED_MESSAGE);
    expect(policy.spec.validations[1].message).toBe(LVMNODE_WRITERS_MESSAGE);
    expect(policy.spec.matchConditions[0].expression).toContain(
      "'system:serviceaccount:lvm-system:lvm-operator'",
    );
    expect(find(recorded, `${VAP}Binding`, "lvm-operator-lvmnode-owner").inputs.spec.matchResources).toEqual({
      namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "lvm-system" } },
    });
    expect(find(recorded, "kubernetes:core/v1:Service", "lvm-operator-webhook").inputs.spec).toEqual({
      selector: {
        "app.kubernetes.io/name": "pulumi-lvm-operator",
        "app.kubernetes.io/instance": "lvm-operator",
      },
      ports: [{ name: "webhook", port: 443, targetPort: "webhook", protocol: "TCP" }],
    });
    const container = find(recorded, DEPLOYMENT, "lvm-operator").inputs.spec.template.spec.containers[0];
    expect(container.ports).toContainEqual({ name: "webhook", containerPort: 9443, protocol: "TCP" });
  });

  test("timeoutSeconds: the webhooks wait as long as asked; outside 1–30 refused, naming the field", async () => {
    const recorded = await runProgram(
      () => new LvmSystem("lvm", args({ operator: { admission: { timeoutSeconds: 30 } } })),
    );
    const vwc = find(recorded, VWC, "lvm-operator-webhook").inputs;
    expect(vwc.webhooks.map((w: { timeoutSeconds: number }) => w.timeoutSeconds)).toEqual([
      30, 30, 30, 30, 30,
    ]);
    for (const bad of [0, 31, 2.5]) {
      const { error } = await runFailingProgram(
        () => new LvmSystem("bad", args({ operator: { admission: { timeoutSeconds: bad } } })),
      );
      expect(error.message).toContain("operator.admission.timeoutSeconds");
    }
  });

  test("with a cert-manager issuer: a Certificate, the CA injected by cert-manager, no Secret of ours", async () => {
    const recorded = await runProgram(
      () =>
        new LvmSystem(
          "cm",
          args({
            operator: { admission: { certManagerIssuer: { name: "cluster-ca", kind: "ClusterIssuer" } } },
          }),
        ),
    );
    expect(recorded.filter((r) => r.type === SECRET)).toEqual([]);
    expect(
      find(recorded, "kubernetes:cert-manager.io/v1:Certificate", "cm-operator-webhook").inputs.spec,
    ).toMatchObject({
      secretName: "cm-operator-webhook-serving",
      dnsNames: ["cm-operator-webhook.lvm-system.svc", "cm-operator-webhook.lvm-system.svc.cluster.local"],
      issuerRef: { group: "cert-manager.io", kind: "ClusterIssuer", name: "cluster-ca" },
      isCA: false,
    });
    // the operator issues the agents' certificate still, not the webhook's
    const flags = find(recorded, DEPLOYMENT, "cm-operator").inputs.spec.template.spec.containers[0].args;
    expect(flags).toContain("--issue-agent-secret");
    expect(flags).not.toContain("--issue-webhook-secret");
    const vwc = find(recorded, VWC, "cm-operator-webhook");
    expect(vwc.inputs.metadata.annotations).toEqual({
      "cert-manager.io/inject-ca-from": "lvm-system/cm-operator-webhook",
      "pulumi.com/waitFor": "jsonpath={.webhooks[0].clientConfig.caBundle}",
    });
    expect(vwc.inputs.webhooks[0].clientConfig.caBundle).toBeUndefined();
    expect(vwc.opts.ignoreChanges).toBeUndefined();
  });

  test("disabled: no webhook, no policy, no webhook flags; a bad issuer kind is refused", async () => {
    const recorded = await runProgram(
      () => new LvmSystem("off", args({ operator: { admission: { enabled: false } } })),
    );
    expect(
      recorded.filter((r) => r.type.includes("admissionregistration") || r.name.includes("webhook")),
    ).toEqual([]);
    const container = find(recorded, DEPLOYMENT, "off-operator").inputs.spec.template.spec.containers[0];
    expect(container.args).not.toContain("--webhook-listen");
    const { error } = await runFailingProgram(
      () =>
        new LvmSystem(
          "bad",
          args({ operator: { admission: { certManagerIssuer: { name: "x", kind: "Issuers" } } } }),
        ),
    );
    expect(error.message).toContain("operator.admission.certManagerIssuer.kind");
  });
});
