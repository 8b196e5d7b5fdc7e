import { randomBytes } from "node:crypto";
import { ROLLOUT_RESUME_ANNOTATION, type LVMNodeSet } from "../api";
import type { KubeClient, KubePaths } from "../kube/client";
import { LVM_NODE_SETS } from "../kube/resources";
import { parseCommandLine } from "./args";
import { CLUSTER_FLAGS, CLUSTER_FLAGS_USAGE, clusterClient, findByName, type ClusterFlags } from "./cluster";
import { EXIT, USAGE_EXIT } from "./exit-codes";
import type { CliIO } from "../process/subcommand";

export const ROLLOUT_USAGE = `usage: pulumi-lvm rollout resume --nodeset NAME [--namespace NS] [--kubeconfig PATH] [--context NAME]

Resumes an LVMNodeSet's rollout that paused at a failed node (condition RolloutPaused): the
operator passes over the nodes it paused at, once, and goes on with the others, maxConcurrent at
a time (docs/operator.md, Staged rollout). It sets the annotation ${ROLLOUT_RESUME_ANNOTATION} to
a new value, which you may also do with kubectl or GitOps.

  --nodeset NAME      the LVMNodeSet
  --namespace NS      its namespace (default: found by its name)
${CLUSTER_FLAGS_USAGE}

exit codes:
  0  resumed: the operator goes on at its next reconcile
  1  not possible: no such LVMNodeSet, its rollout is not paused, not allowed (403), or the
     cluster could not be reached
  2  usage error (bad arguments)
`;

const FLAGS = {
  nodeset: { type: "string", value: "name" },
  namespace: { type: "string", value: "namespace" },
  ...CLUSTER_FLAGS,
} as const;

type NamedSet = LVMNodeSet & { metadata: { name: string } };

/** `pulumi-lvm rollout resume`: a new value of the resume annotation (one mechanism, docs/operator.md). */
export async function run(io: CliIO, client?: KubeClient & KubePaths): Promise<number> {
  const line = parseCommandLine(io.argv, FLAGS, { positionals: true });
  if (line.kind === "help") return (io.stdout(ROLLOUT_USAGE), EXIT.OK);
  const usage = (message: string) => (
    io.stderr(`pulumi-lvm rollout: ${message}\n\n${ROLLOUT_USAGE}`),
    USAGE_EXIT
  );
  if (line.kind === "error") return usage(line.message);
  const values = line.values as { nodeset?: string; namespace?: string } & ClusterFlags;
  const name = values.nodeset;
  if (line.positionals.length !== 1 || line.positionals[0] !== "resume" || !name)
    return usage('the command is "rollout resume --nodeset NAME"');
  const fail = (message: string) => (io.stderr(`pulumi-lvm rollout resume: ${message}\n`), EXIT.INVALID);
  try {
    const kube = client ?? clusterClient(values);
    const found = await findByName<NamedSet>(kube, LVM_NODE_SETS, name, values.namespace);
    if (typeof found === "string") return fail(found);
    const ns = found.metadata.namespace ?? "";
    const paused = found.status?.conditions?.find((c) => c.type === "RolloutPaused" && c.status === "True");
    // Refused rather than set anyway: a value given while nothing is paused would be recorded as
    // acted on, and could not resume the next pause.
    if (!paused) return fail(`LVMNodeSet ${ns}/${name}: its rollout is not paused; nothing to resume`);
    const value = `${new Date().toISOString()}-${randomBytes(3).toString("hex")}`;
    await kube.patch(LVM_NODE_SETS, ns, name, {
      metadata: {
        resourceVersion: found.metadata.resourceVersion,
        annotations: { [ROLLOUT_RESUME_ANNOTATION]: value },
      },
    });
    io.stdout(
      `resumed the rollout of LVMNodeSet ${ns}/${name}, which was paused: ${paused.message ?? paused.reason}\n`,
    );
    return EXIT.OK;
  } catch (e) {
    return fail((e as Error).message ?? String(e));
  }
}
