import { APPROVE_ANNOTATION, type LVMNode } from "../api";
import type { KubeClient, KubePaths } from "../kube/client";
import { KubeApiError } from "../kube/errors";
import { LVM_NODES } from "../kube/resources";
import { parseCommandLine } from "./args";
import { CLUSTER_FLAGS, CLUSTER_FLAGS_USAGE, clusterClient, findByName, type ClusterFlags } from "./cluster";
import { EXIT, USAGE_EXIT } from "./exit-codes";
import type { CliIO } from "../process/subcommand";

export const APPROVE_USAGE = `usage: pulumi-lvm approve --node NODE --hash HASH [--namespace NS] [--kubeconfig PATH] [--context NAME]

Approves the plan waiting on a node's LVMNode (status.pendingApproval), by its hash: the operator
applies that plan once, and only while it is still the plan it computes (docs/operator.md,
Reviewed changes). Needs the verb approve on lvmnodes (ClusterRole pulumi-lvm-approver).

  --node NODE         the node (its LVMNode has its name)
  --hash HASH         the hash of the plan shown waiting
  --namespace NS      the LVMNode's namespace (default: found by the node's name)
${CLUSTER_FLAGS_USAGE}

exit codes:
  0  approved: the operator applies the plan at its next reconcile
  1  refused or not possible: no such LVMNode, nothing waits, another plan waits (its hash is
     printed), not allowed (403), or the cluster could not be reached
  2  usage error (bad arguments)
`;

const FLAGS = {
  node: { type: "string", value: "node" },
  hash: { type: "string", value: "hash" },
  namespace: { type: "string", value: "namespace" },
  ...CLUSTER_FLAGS,
} as const;

/** `pulumi-lvm approve`: sets the approval annotation (one mechanism, docs/operator.md). */
export async function run(io: CliIO, client?: KubeClient & KubePaths): Promise<number> {
  const line = parseCommandLine(io.argv, FLAGS);
  if (line.kind === "help") return (io.stdout(APPROVE_USAGE), EXIT.OK);
  const usage = (message: string) => (
    io.stderr(`pulumi-lvm approve: ${message}\n\n${APPROVE_USAGE}`),
    USAGE_EXIT
  );
  if (line.kind === "error") return usage(line.message);
  const values = line.values as { node?: string; hash?: string; namespace?: string } & ClusterFlags;
  const node = values.node;
  const hash = values.hash?.trim();
  if (!node || !hash) return usage("--node and --hash are required");
  const fail = (message: string) => (io.stderr(`pulumi-lvm approve: ${message}\n`), EXIT.INVALID);
  try {
    const kube = client ?? clusterClient(values);
    const found = await findByName<LVMNode & { metadata: { name: string } }>(
      kube,
      LVM_NODES,
      node,
      values.namespace,
    );
    if (typeof found === "string") return fail(found);
    const ns = found.metadata.namespace ?? "";
    const pending = found.status?.pendingApproval;
    if (!pending) return fail(`LVMNode ${ns}/${node}: no plan waits for an approval`);
    if (pending.hash !== hash)
      return fail(
        `LVMNode ${ns}/${node}: the hash ${hash} is stale: the plan waiting now is ${pending.hash}; review it (status.pendingApproval) and approve that hash`,
      );
    await kube.patch(LVM_NODES, ns, node, { metadata: { annotations: { [APPROVE_ANNOTATION]: hash } } });
    io.stdout(
      `approved plan ${hash} of LVMNode ${ns}/${node} (${pending.steps.length} step(s)); the operator applies it at its next reconcile\n`,
    );
    return EXIT.OK;
  } catch (e) {
    return fail(e instanceof KubeApiError || e instanceof Error ? e.message : String(e));
  }
}
