/**
 * The journey's cluster mode (step 2b on): the quickstart's NodeSet switched by config to cluster
 * mode, as examples/quickstart/README.md tells a platform team (`clusterMode: true` and the
 * kubeconfig as a secret), and the one thing the test cluster lacks for it: a route from the
 * apiserver on the host to the agent pod in the guest (a real cluster's apiserver reaches its pods;
 * test/cluster/cluster.ts routeToPod). Read with the cluster's API and `pulumi` itself.
 */
import * as fs from "node:fs";
import type { Cluster } from "../cluster/cluster";
import { get } from "../cluster/objects";
import type { Json } from "../env/cluster";
import type { PulumiWorkspace } from "../pulumi/cli";
import { AGENT_ROUTE_PORT, NAMESPACE, setStackConfig } from "./journey";

/** The agent DaemonSet's pod label (docs/components.md, cluster mode). */
const AGENT_SELECTOR = "app.kubernetes.io/name=pulumi-lvm-agent";

/** Routes the apiserver to the node's Running agent pod (its `http` port); returns the pod's name. */
export async function routeAgentPod(cluster: Cluster): Promise<string> {
  const pods: Json[] =
    (
      await get(
        cluster.cp,
        `/api/v1/namespaces/${NAMESPACE}/pods?labelSelector=${encodeURIComponent(AGENT_SELECTOR)}`,
      )
    )?.items ?? [];
  const pod = pods.find(
    (p) =>
      p.spec?.nodeName === cluster.nodeName &&
      p.status?.phase === "Running" &&
      p.status?.podIP &&
      !p.metadata.deletionTimestamp,
  );
  if (!pod)
    throw new Error(
      `no Running agent pod with an IP on node ${cluster.nodeName}: ${pods.map((p) => `${p.metadata.name} ${p.status?.phase}`).join(", ") || "none"}`,
    );
  const port = pod.spec.containers
    .flatMap((c: Json) => c.ports ?? [])
    .find((p: Json) => p.name === "http")?.containerPort;
  if (!port) throw new Error(`agent pod ${pod.metadata.name} has no container port named http`);
  await cluster.routeToPod(pod.status.podIP, port, AGENT_ROUTE_PORT);
  return pod.metadata.name;
}

/** `pulumi config set --secret kubeconfig <the admin kubeconfig>` and `clusterMode: true`. */
export async function enableClusterMode(ws: PulumiWorkspace, cluster: Cluster): Promise<void> {
  const kubeconfig = fs.readFileSync(cluster.cp.kubeconfigPath, "utf8");
  // On stdin, not as an argument: the workspace's transcript records every command line.
  const r = await ws.runAsync(["config", "set", "--secret", "kubeconfig"], { input: kubeconfig });
  if (r.code !== 0) throw new Error(`pulumi config set --secret kubeconfig exited ${r.code}:\n${r.output}`);
  setStackConfig(ws, "clusterMode", true);
}

/** The URN of the quickstart's NodeSetDisks (the per-node plans and results) in the stack's state. */
export function nodeSetDisksUrn(ws: PulumiWorkspace): string {
  const urn = (ws.exportState().deployment.resources ?? [])
    .map((r) => r.urn)
    .find((u) => u.endsWith("NodeSetDisks::quickstart-disks"));
  if (!urn) throw new Error("no NodeSetDisks in the stack's state: is the NodeSet in cluster mode?");
  return urn;
}

/** One node's entry of the stack output `nodes` (NodeSet.nodes), as `pulumi stack output` prints it. */
export async function nodeOutput(ws: PulumiWorkspace, node: string): Promise<Json> {
  // --show-secrets: `nodes` holds no credential; a secret there would print as "[secret]".
  const r = await ws.runAsync(["stack", "output", "--json", "--show-secrets", "nodes"]);
  if (r.code !== 0) throw new Error(`pulumi stack output nodes exited ${r.code}:\n${r.output}`);
  const nodes = JSON.parse(r.stdout) as Json;
  if (!nodes?.[node]) throw new Error(`stack output nodes has no ${node}: ${r.stdout}`);
  return nodes[node];
}
