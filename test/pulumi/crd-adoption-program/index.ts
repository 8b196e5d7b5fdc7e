/**
 * The Pulumi program of test/pulumi/crd-adoption.test.ts: an LvmSystem without the operator and
 * without TopoLVM (its CRDs, namespace, agent and RBAC), through the real Kubernetes provider
 * against a real kube-apiserver. From the stack's config:
 *
 *   kubeconfig           the cluster (a secret)
 *   namespace            LvmSystem's namespace (one per stack: a destroyed one may still be terminating)
 *   crdDirectory         optional: CRDs from another directory (an "upgraded" copy of deploy/crds)
 *   retainCrdsOnDelete   optional: true or false; unset: LvmSystem's default
 *   previousRelease      optional: true makes the CRDs what the previous release declared (below)
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { LvmSystem } from "../../../src";
import { withSkipAwait } from "../skip-await";

const config = new pulumi.Config();
const crdDirectory = config.get("crdDirectory");
const retainCrdsOnDelete = config.getBoolean("retainCrdsOnDelete");

/**
 * TEST-ONLY: this tier has no kubelet, so the agent DaemonSet's rollout could only time out; the
 * provider is told not to wait for it (kubernetes-program/index.ts explains). Never in a user's program.
 */
function skipAwaitWithoutKubelet(
  args: pulumi.ResourceTransformationArgs,
): pulumi.ResourceTransformationResult | undefined {
  if (args.type !== "kubernetes:apps/v1:DaemonSet") return undefined;
  return withSkipAwait(args);
}

/**
 * TEST-ONLY, with `previousRelease` (and retainCrdsOnDelete false): the CRD resources the previous
 * release of LvmSystem declared by default, plain CustomResourceDefinitions with the same names and
 * parent, kept on delete. A stack made by it is then upgraded to this release by running without.
 */
function asPreviousRelease(
  args: pulumi.ResourceTransformationArgs,
): pulumi.ResourceTransformationResult | undefined {
  if (args.type !== "kubernetes:apiextensions.k8s.io/v1:CustomResourceDefinition") return undefined;
  return { props: args.props, opts: { ...args.opts, retainOnDelete: true } };
}

const provider = new k8s.Provider("cluster", { kubeconfig: config.requireSecret("kubeconfig") });

const system = new LvmSystem(
  "lvm",
  {
    namespace: config.require("namespace"),
    agentImage: "pulumi-lvm:e2e",
    agentImagePullPolicy: "Never",
    operator: { enabled: false },
    // No operator issues the agents' certificate: a Secret of the user's (none is needed, no kubelet here).
    agentTlsSecretName: "lvm-agent-tls",
    ...(crdDirectory ? { crdDirectory } : {}),
    ...(retainCrdsOnDelete === undefined ? {} : { retainCrdsOnDelete }),
  },
  {
    providers: [provider],
    transformations: [
      skipAwaitWithoutKubelet,
      ...(config.getBoolean("previousRelease") ? [asPreviousRelease] : []),
    ],
  },
);

export const crdNames = system.crdNames;
