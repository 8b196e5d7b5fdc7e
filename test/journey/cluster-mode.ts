/**
 * The journey's cluster mode (step 2b on): the quickstart's NodeSet switched by config to cluster
 * mode, as examples/quickstart/README.md tells a platform team (`clusterMode: true` and the
 * kubeconfig as a secret). The provider reaches the agent pod through the apiserver's pod proxy; the
 * test cluster's apiserver reaches pod IPs through the node's pod relay (test/cluster/kubelet-proxy.ts),
 * as a real cluster's apiserver reaches its pods. Read with the cluster's API and `pulumi` itself.
 */
import * as fs from "node:fs";
import type { Cluster } from "../cluster/cluster";
import { get } from "../cluster/objects";
import type { Json } from "../env/cluster";
import type { PulumiWorkspace } from "../pulumi/cli";
import { NAMESPACE, setStackConfig } from "./journey";

/** The agent DaemonSet's pod label (docs/components.md, cluster mode). */
const AGENT_SELECTOR = "app.kubernetes.io/name=pulumi-lvm-agent";

/** The node's Running agent pod with an IP and an `http` port (what cluster mode calls); its name. */
export async function requireAgentPod(cluster: Cluster): Promise<string> {
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

/** Runs `f` (a pulumi command in cluster mode); when it fails, cluster mode is turned off again, so
 * that the later steps run in the operator-only layout instead of failing the same way. */
export async function offIfItFails<T>(ws: PulumiWorkspace, f: () => Promise<T>): Promise<T> {
  try {
    return await f();
  } catch (e) {
    setStackConfig(ws, "clusterMode", false);
    throw e;
  }
}

/** The quickstart's NodeSetDisks (the per-node plans and results) in the stack's state. */
function nodeSetDisks(ws: PulumiWorkspace) {
  const r = (ws.exportState().deployment.resources ?? []).find((x) =>
    x.urn.endsWith("pulumi-lvm:NodeSetDisks::quickstart-disks"),
  );
  if (!r) throw new Error("no NodeSetDisks in the stack's state: is the NodeSet in cluster mode?");
  return r;
}

/** Its URN, for `pulumi refresh --target`. */
export const nodeSetDisksUrn = (ws: PulumiWorkspace): string => nodeSetDisks(ws).urn;

/**
 * One node's result as the state holds it (NodeSetDisks' `nodes` output: the last apply, and the
 * agent's status at the last refresh). From the state, not `pulumi stack output`: a refresh updates
 * the resource, not the stack's outputs.
 */
export function nodeResult(ws: PulumiWorkspace, node: string): Json {
  const nodes = nodeSetDisks(ws).outputs?.nodes as Json;
  if (!nodes?.[node])
    throw new Error(`NodeSetDisks has no result for node ${node}: ${JSON.stringify(nodes)}`);
  return nodes[node];
}
