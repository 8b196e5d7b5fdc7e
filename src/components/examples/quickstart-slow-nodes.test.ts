import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  find,
  installMocks,
  ofType,
  runProgramDirectory,
  type Recorded,
} from "../../../test/support/components/pulumi-mocks";

/**
 * examples/quickstart with the config for slow nodes (the journey's, under TCG): `operatorArgs` and
 * `webhookTimeoutSeconds` reach the operator's Deployment and its admission webhook.
 */
const program = path.resolve(__dirname, "../../../examples/quickstart");
const VWC = "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration";

let recorded: Recorded[];
beforeAll(async () => {
  await installMocks();
  pulumi.runtime.setAllConfig({
    "project:diskSerials": JSON.stringify(["SN-AAA111", "SN-BBB222"]),
    "project:operatorArgs": JSON.stringify(["--leader-election-lease-duration", "90s"]),
    "project:webhookTimeoutSeconds": "30",
  });
  ({ recorded } = await runProgramDirectory(program));
});

test("webhookTimeoutSeconds: every webhook of the operator waits that long", () => {
  const [vwc] = ofType(recorded, VWC);
  const webhooks = vwc!.inputs.webhooks as Array<{ name: string; timeoutSeconds: number }>;
  expect(webhooks.length).toBeGreaterThanOrEqual(5); // node sets, nodes, writes, in-use, approvals
  expect(webhooks.map((w) => [w.name, w.timeoutSeconds])).toEqual(webhooks.map((w) => [w.name, 30]));
});

test("operatorArgs: after the operator's own flags", () => {
  const operator = find(recorded, "kubernetes:apps/v1:Deployment", "lvm-operator");
  const args: string[] = operator.inputs.spec.template.spec.containers[0].args;
  expect(args.slice(-2)).toEqual(["--leader-election-lease-duration", "90s"]);
});
