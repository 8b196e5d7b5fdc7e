/**
 * The Pulumi program of the approvals engine test (test/pulumi/approvals-e2e.test.ts): a NodeSet in
 * operator mode, through the real Kubernetes provider, whose one volume group takes every device
 * (wiping what has a signature, which under the default approvalPolicy waits for an approval), and
 * the approvals the stack's config names. From the stack's config:
 *
 *   kubeconfig    the cluster (a secret)                  pulumi config set --secret kubeconfig ...
 *   namespace     the operator's namespace                pulumi config set namespace storage
 *   volumeGroup   the group's name                        pulumi config set volumeGroup vg1
 *   approvals     node → hash (optional)                  pulumi config set --path 'approvals.n1' <hash>
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { NodeSet } from "../../../src";

const config = new pulumi.Config();
const kubernetes = new k8s.Provider("k8s", { kubeconfig: config.requireSecret("kubeconfig") });
const volumeGroup = config.require("volumeGroup");

new NodeSet(
  "wild",
  {
    namespace: config.require("namespace"),
    template: {
      volumeGroups: [
        {
          name: volumeGroup,
          minDeviceSize: "64Mi",
          forceWipeDevicesAndDestroyAllData: true,
          deviceSelector: {
            deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
          },
        },
      ],
    },
    approvals: config.getObject<Record<string, string>>("approvals") ?? {},
    // The test waits for the operator itself, and a plan waiting for an approval never makes the set Ready.
    awaitNodesReady: false,
  },
  { providers: { kubernetes } },
);
