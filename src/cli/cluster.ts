import { createKubeClient, type KubeClient, type KubeObject, type KubePaths } from "../kube/client";
import type { KubeConnection } from "../kube/connection";
import { resourcePath, type Resource } from "../kube/resources";
import { connectionFromEnvKubeconfig, connectionFromKubeconfigFile } from "../kube/kubeconfig";

/**
 * How a `pulumi-lvm` subcommand talks to a cluster (approve, rollout resume, status): as the user, through
 * their kubeconfig as kubectl finds it (`--kubeconfig`, else KUBECONFIG, else ~/.kube/config) and
 * `--context`, with the one Kubernetes client (src/kube).
 */
export interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
}

/** The flags, for parseCommandLine (src/cli/args.ts). */
export const CLUSTER_FLAGS = {
  kubeconfig: { type: "string", value: "path" },
  context: { type: "string", value: "name" },
} as const;

/** The usage lines of the flags. */
export const CLUSTER_FLAGS_USAGE = `  --kubeconfig PATH   the kubeconfig (default: KUBECONFIG, else ~/.kube/config)
  --context NAME      its context (default: its current-context)`;

/** The user's client, or throws naming the kubeconfig and what is wrong with it. */
export function clusterClient(
  flags: ClusterFlags,
  env: NodeJS.ProcessEnv = process.env,
): KubeClient & Required<KubePaths> {
  return createKubeClient({ connection: clusterConnection(flags, env) });
}

/** The user's connection (server and credentials) from their kubeconfig, or throws as clusterClient. */
export function clusterConnection(flags: ClusterFlags, env: NodeJS.ProcessEnv = process.env): KubeConnection {
  return flags.kubeconfig
    ? connectionFromKubeconfigFile(flags.kubeconfig, flags.context)
    : connectionFromEnvKubeconfig(env, flags.context);
}

/**
 * The object `name` of a namespaced resource: in `namespace`, else the one of that name in any
 * namespace (a field selector, so one request); else a sentence saying why not.
 */
export async function findByName<T extends KubeObject>(
  kube: KubeClient & KubePaths,
  r: Resource,
  name: string,
  namespace?: string,
): Promise<T | string> {
  if (namespace) return (await kube.get<T>(r, namespace, name)) ?? `no ${r.kind} ${namespace}/${name}`;
  const list = (await kube.getPath(
    `${resourcePath(r)}?fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`,
  )) as { items?: T[] };
  const items = list.items ?? [];
  if (items.length === 0) return `no ${r.kind} named ${name} in any namespace`;
  if (items.length > 1)
    return `${r.kind}s named ${name} in ${items.map((i) => i.metadata.namespace).join(", ")}: say which with --namespace`;
  return items[0]!;
}
