import { createKubeClient, type KubeClient, type KubePaths } from "../kube/client";
import { connectionFromEnvKubeconfig, connectionFromKubeconfigFile } from "../kube/kubeconfig";

/**
 * How a `pulumi-lvm` subcommand talks to a cluster (approve; rollout resume): as the user, through
 * their kubeconfig as kubectl finds it (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config) and
 * `--context`, with the one Kubernetes client (src/kube).
 */
export interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** The usage lines of the flags. */
export const CLUSTER_FLAGS_USAGE = `  --kubeconfig PATH   the kubeconfig (default: KUBECONFIG, else ~/.kube/config)
  --context NAME      its context (default: its current-context)`;

/** The user's client, or throws naming the kubeconfig and what is wrong with it. */
export function clusterClient(
  flags: ClusterFlags,
  env: NodeJS.ProcessEnv = process.env,
): KubeClient & KubePaths {
  const connection = flags.kubeconfig
    ? connectionFromKubeconfigFile(flags.kubeconfig, flags.context)
    : connectionFromEnvKubeconfig(env, flags.context);
  return createKubeClient({ connection });
}
