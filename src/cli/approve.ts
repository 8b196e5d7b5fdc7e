import { parseArgs } from "node:util";
import { APPROVE_ANNOTATION, type LVMNode } from "../api";
import type { KubeClient, KubePaths } from "../kube/client";
import { KubeApiError } from "../kube/errors";
import { LVM_NODES } from "../kube/resources";
import { CLUSTER_FLAGS_USAGE, clusterClient, findByName } from "./cluster";
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

/** `pulumi-lvm approve`: sets the approval annotation (one mechanism, docs/operator.md). */
export async function run(io: CliIO, client?: KubeClient & KubePaths): Promise<number> {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...io.argv],
      options: {
        node: { type: "string" },
        hash: { type: "string" },
        namespace: { type: "string" },
        kubeconfig: { type: "string" },
        context: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (e) {
    io.stderr(`pulumi-lvm approve: ${(e as Error).message}\n\n${APPROVE_USAGE}`);
    return USAGE_EXIT;
  }
  if (values.help) return (io.stdout(APPROVE_USAGE), EXIT.OK);
  const node = values.node as string | undefined;
  const hash = (values.hash as string | undefined)?.trim();
  if (!node || !hash) {
    io.stderr(`pulumi-lvm approve: --node and --hash are required\n\n${APPROVE_USAGE}`);
    return USAGE_EXIT;
  }
  const fail = (message: string) => (io.stderr(`pulumi-lvm approve: ${message}\n`), EXIT.INVALID);
  try {
    const kube =
      client ??
      clusterClient({
        kubeconfig: values.kubeconfig as string | undefined,
        context: values.context as string | undefined,
      });
    const found = await findByName<LVMNode & { metadata: { name: string } }>(
      kube,
      LVM_NODES,
      node,
      values.namespace as string | undefined,
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
