import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { APPROVE_ANNOTATION, GROUP_VERSION } from "../api";

/**
 * A NodeSet's `approvals` (node → the hash of the plan waiting on its LVMNode) as the one approval
 * mechanism the operator has (docs/operator.md, Approving): the annotation lvm.topolvm.io/approve
 * on that LVMNode, set by a server-side apply patch of the Kubernetes provider, with its
 * credentials. The operator's webhook judges it as it judges `pulumi-lvm approve`: a caller without
 * the verb approve on lvmnodes gets 403, a hash other than the waiting plan's 409 naming that one;
 * and the operator applies a plan only under the hash approved. The hash is written by a person
 * who read the plan (`pulumi-lvm status`, kubectl), not read from the cluster: `pulumi up` runs the
 * program twice, and a plan read on the second run is one nobody saw. A node with no LVMNode: the
 * apply would create one, and the API server refuses it (no spec), so the up fails naming it.
 *
 * Not dependent on the LVMNodeSet: its await (LVMNodesReady) cannot end while a plan waits, so an
 * approval behind it would never be given.
 */
export function nodeApprovals(
  name: string,
  args: { namespace: string; approvals: Readonly<Record<string, pulumi.Input<string>>> },
  opts: pulumi.CustomResourceOptions,
): k8s.apiextensions.CustomResourcePatch[] {
  return Object.entries(args.approvals)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(
      ([node, hash]) =>
        new k8s.apiextensions.CustomResourcePatch(
          `${name}-approve-${node}`,
          {
            apiVersion: GROUP_VERSION,
            kind: "LVMNode",
            metadata: { name: node, namespace: args.namespace, annotations: { [APPROVE_ANNOTATION]: hash } },
          },
          opts,
        ),
    );
}
