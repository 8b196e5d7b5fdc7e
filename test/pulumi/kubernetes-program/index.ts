/**
 * The Pulumi program of the Kubernetes engine test (test/pulumi/kubernetes-e2e.test.ts): an
 * LvmSystem (CRDs, RBAC, agent DaemonSet, operator, TopoLVM from a chart on disk) and a NodeSet in
 * cluster mode, through the real Kubernetes provider (pulumi-resource-kubernetes built by
 * test/pulumi/install-kubernetes.sh) against a real kube-apiserver. From the stack's config:
 *
 *   kubeconfig         the cluster (a secret)                 pulumi config set --secret kubeconfig ...
 *   topolvmChartPath   TopoLVM's chart directory              pulumi config set topolvmChartPath /tmp/...
 *   agentImage         the agent image                        pulumi config set agentImage pulumi-lvm:e2e
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { LvmSystem, NodeSet, type NodeSelectorArgs, type TemplateArgs } from "../../../src";
import { withSkipAwait } from "../skip-await";

const config = new pulumi.Config();
const kubeconfig = config.requireSecret("kubeconfig");

/**
 * TEST-ONLY TRANSFORMATION, because this tier has no kubelet: no pod ever runs, so the provider's
 * await of a DaemonSet's or a Deployment's rollout, a Service's endpoints (and of the chart's workloads) could only time
 * out. It asks the provider not to wait for them (`pulumi.com/skipAwait`, the chart's `skipAwait`),
 * and lets the admission webhook no pod serves fail open; every object is still created and read
 * back by the test. Never in a user's program.
 */
function skipAwaitWithoutKubelet(
  args: pulumi.ResourceTransformationArgs,
): pulumi.ResourceTransformationResult | undefined {
  // No operator pod ever serves the admission webhook here: with failurePolicy Fail no LVMNodeSet
  // could be created. The configuration is still created and read back; its calls fail open. Nor
  // does an operator set its caBundle, which the provider would wait for (`pulumi.com/waitFor`).
  if (args.type === "kubernetes:admissionregistration.k8s.io/v1:ValidatingWebhookConfiguration") {
    const webhooks = pulumi.output(args.props.webhooks as pulumi.Input<Array<Record<string, unknown>>>);
    return withSkipAwait({
      ...args,
      props: {
        ...args.props,
        webhooks: webhooks.apply((ws) => ws.map((w) => ({ ...w, failurePolicy: "Ignore" }))),
      },
    });
  }
  if (args.type === "kubernetes:helm.sh/v4:Chart")
    return { props: { ...args.props, skipAwait: true }, opts: args.opts };
  // A Service with a selector is awaited until it has a ready endpoint: the operator's webhook
  // Service never gets one here (up ran into the provider's 10-minute timeout).
  // An LVMNodeSet is awaited until the operator reports its nodes built (NodeSet's awaitNodesReady): no operator
  // pod runs here either.
  if (
    /^kubernetes:(apps\/v1:(DaemonSet|Deployment|StatefulSet)|core\/v1:Service|lvm\.topolvm\.io\/v2alpha1:LVMNodeSet)$/.test(
      args.type,
    )
  )
    return withSkipAwait(args);
  return undefined;
}

const provider = new k8s.Provider("cluster", { kubeconfig });

/** Nodes labelled for this test: none exist on this tier (no kubelet registers one). */
const nodeSelector: NodeSelectorArgs = {
  nodeSelectorTerms: [
    { matchExpressions: [{ key: "pulumi-lvm.test/storage", operator: "In", values: ["true"] }] },
  ],
};
/** A thick class only: the VolumeSnapshotClass of a thin class needs the snapshot CRDs, not on this tier. */
const template: TemplateArgs = {
  volumeGroups: [
    {
      name: "vg-e2e",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "serial", operator: "In", values: ["E2E-1"] }] }],
      },
    },
  ],
  deviceClasses: [{ name: "bulk", strategy: "Thick", volumeGroup: "vg-e2e", default: true }],
};

const system = new LvmSystem(
  "lvm",
  {
    agentImage: config.get("agentImage") ?? "pulumi-lvm:e2e",
    agentImagePullPolicy: "Never",
    topolvm: {
      chartVersion: "17.1.0",
      chartPath: config.require("topolvmChartPath"),
      nodeSets: [{ name: "e2e", nodeSelector, template }],
      // No cert-manager on this tier: the webhook's TLS secret is named instead.
      values: { webhook: { certManager: false, secretName: "topolvm-webhook-tls" } },
    },
  },
  { providers: [provider], transformations: [skipAwaitWithoutKubelet] },
);

const nodeSet = new NodeSet(
  "e2e",
  {
    nodeSelector,
    template,
    cluster: { kubeconfig, serviceAccountName: system.provisionerServiceAccountName },
  },
  { system, providers: [provider], transformations: [skipAwaitWithoutKubelet] },
);

export const namespace = system.namespace;
export const crdNames = system.crdNames;
export const agentDaemonSet = system.agentDaemonSetName;
export const operatorDeployment = system.operatorDeploymentName;
export const storageClasses = nodeSet.storageClassNames;
export const nodes = nodeSet.nodes;
