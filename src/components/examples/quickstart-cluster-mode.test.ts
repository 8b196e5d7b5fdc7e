import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import {
  find,
  installMocks,
  runProgramDirectory,
  type Recorded,
} from "../../../test/support/components/pulumi-mocks";

/**
 * examples/quickstart with cluster-mode config (`clusterMode`, the secret `kubeconfig`): Pulumi plans
 * and applies through the agents found via the API server, as the provisioner (test/journey step 2b).
 */
const program = path.resolve(__dirname, "../../../examples/quickstart");
const KUBECONFIG = "apiVersion: v1\nkind: Config\nusers: [{ name: admin, user: { token: tok-123456 } }]\n";

let recorded: Recorded[];
beforeAll(async () => {
  await installMocks();
  pulumi.runtime.setAllConfig(
    {
      "project:diskSerials": JSON.stringify(["SN-AAA111", "SN-BBB222"]),
      "project:clusterMode": "true",
      "project:kubeconfig": KUBECONFIG,
    },
    ["project:kubeconfig"],
  );
  ({ recorded } = await runProgramDirectory(program));
});

test("adds NodeSetDisks in cluster mode: the kubeconfig kept secret, the system's provisioner, the node selector", async () => {
  const disks = find(recorded, "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks", "quickstart-disks");
  expect(disks.parent).toEqual({ type: "pulumi-lvm:index:NodeSet", name: "quickstart" });
  expect(disks.inputs.agents).toBeUndefined();
  // The whole `cluster` input is a secret (its kubeconfig holds credentials).
  expect(disks.inputs.cluster[pulumi.runtime.specialSigKey]).toBe(pulumi.runtime.specialSecretSig);
  expect(await pulumi.isSecret(disks.props.cluster.kubeconfig)).toBe(true);
  expect(disks.inputs.cluster.value).toEqual({
    kubeconfig: KUBECONFIG,
    serviceAccount: "lvm-provisioner",
    nodeSelector: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: "node-role.kubernetes.io/storage", operator: "In", values: ["true"] }] },
      ],
    },
  });
});
