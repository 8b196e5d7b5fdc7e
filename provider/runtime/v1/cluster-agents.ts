import { z } from "zod";
import { nodeAudience } from "../../../src/agent-api/auth";
import type { NodeSelector } from "../../../src/api";
import { matchesNodeSelector } from "../../../src/planner/node-selector";
import type { AgentEndpoint } from "../../../src/agent-client/agent-client";
import { AGENT_POD_LABELS } from "../../../src/agent-api/pods";
import { agentPodOf, podProxyPath, podSchema } from "../../../src/agent-client/agent-pods";
import { createKubeClient, type KubePaths } from "../../../src/kube/client";
import { apiUrl } from "../../../src/kube/connection";
import type { Transport } from "../../../src/kube/http";
import { connectionFromKubeconfigText } from "../../../src/kube/kubeconfig";
import { integerFromEnv } from "../../../src/agent-client/env-settings";

/** Cluster mode's settings (the `cluster` input). */
export interface ClusterSettings {
  /** The kubeconfig's text; its user lists nodes and pods, proxies to pods and requests the token. */
  readonly kubeconfig: string;
  /** @default the kubeconfig's current-context */
  readonly context?: string;
  /** The service account the agents accept (the LvmSystem's provisioner); a token for it is requested per operation. */
  readonly serviceAccount: string;
  /** The node set's nodeSelector (core/v1). @default every node */
  readonly nodeSelector?: NodeSelector;
}

/** What the agents of a node set are, and the nodes whose agent cannot be called (with why). */
export interface LocatedAgents {
  readonly endpoints: AgentEndpoint[];
  readonly missing: ReadonlyArray<{ readonly node: string; readonly message: string }>;
}

/**
 * How long to wait for agent pods that exist but are not Ready yet, and how often to look again.
 * Right after an LvmSystem's rollout, or while its DaemonSet replaces a pod, a node's agent is
 * starting: on a slow node it takes a minute to answer its readiness probe. Failing the preview then
 * would only make the user run it again. A node with no agent pod at all is not waited for (a
 * DaemonSet that does not select it will not start one).
 */
export interface ReadyWait {
  readonly timeoutMs: number;
  readonly pollMs: number;
  /** @default setTimeout */
  readonly sleep?: (ms: number) => Promise<void>;
  /** @default Date.now */
  readonly now?: () => number;
}

/** Two minutes, looking every 2 s. */
export const DEFAULT_READY_WAIT: ReadyWait = { timeoutMs: 120_000, pollMs: 2_000 };

/** Overrides the wait, in whole seconds (0: do not wait). */
export const READY_WAIT_ENV = "PULUMI_LVM_AGENT_READY_WAIT_SECONDS";

/** The wait from the environment (READY_WAIT_ENV), else the default; a bad value is a clear error. */
export function readyWaitFrom(env: NodeJS.ProcessEnv): ReadyWait {
  const seconds = integerFromEnv(env, {
    name: READY_WAIT_ENV,
    fallback: DEFAULT_READY_WAIT.timeoutMs / 1000,
    min: 0,
    meaning: "seconds to wait for agent pods that are not Ready yet",
  });
  return { ...DEFAULT_READY_WAIT, timeoutMs: seconds * 1000 };
}

/** Lifetime asked for the agent token: the minimum TokenRequest allows; every call starts well within it. */
export const AGENT_TOKEN_SECONDS = 600;

/**
 * The agents of a node set in a cluster, reached through the API server's pod proxy with the
 * kubeconfig's user: the nodes `nodes` names, or else every node the nodeSelector picks; per node
 * the agent DaemonSet's pod on it, Running and Ready (or why not); and per node one short-lived
 * token for the provisioner service account, bound to that node's audience (pulumi-lvm-agent/<node>),
 * requested now and never stored.
 * Failing to list, or to get the token, is an error naming the call, the HTTP status and the API
 * server's message; a node without a callable agent is in `missing`.
 */
export async function findClusterAgents(
  transport: Transport,
  namespace: string,
  cluster: ClusterSettings,
  nodes?: readonly string[],
  wait: ReadyWait = DEFAULT_READY_WAIT,
): Promise<LocatedAgents> {
  const conn = connectionFromKubeconfigText(
    cluster.kubeconfig,
    { name: "cluster.kubeconfig", baseDir: process.cwd() },
    cluster.context,
  );
  const api = createKubeClient({ connection: conn, transport });
  const names = [...(nodes ?? (await selectedNodes(api, cluster.nodeSelector)))].sort();
  if (!names.length) return { endpoints: [], missing: [] };
  const found = await readyAgentPods(api, namespace, names, wait);
  const missing = found.flatMap(({ node, located }) =>
    located.ok ? [] : [{ node, message: located.message }],
  );
  const ready = found.flatMap(({ node, located }) => (located.ok ? [{ node, pod: located.pod }] : []));
  if (!ready.length) return { endpoints: [], missing };
  // One token per node, bound to that node's audience: a token one agent sees is useless at another.
  const endpoints: AgentEndpoint[] = [];
  for (const { node, pod } of ready)
    endpoints.push({
      node,
      url: apiUrl(conn, podProxyPath(namespace, pod)).href,
      token: await agentToken(api, namespace, cluster.serviceAccount, node),
      proxy: { namespace, pod: pod.name, apiServer: conn },
    });
  return { endpoints, missing };
}

/** Each node's agent pod, listing again while a node's pod exists but is not Ready and time is left. */
async function readyAgentPods(api: KubePaths, namespace: string, names: readonly string[], wait: ReadyWait) {
  const now = wait.now ?? Date.now;
  const sleep = wait.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const deadline = now() + wait.timeoutMs;
  for (;;) {
    const pods = await agentPods(api, namespace);
    const found = names.map((node) => ({ node, located: agentPodOf(node, namespace, pods) }));
    const starting = found.some(({ located }) => !located.ok && located.mayBecomeReady);
    if (!starting || now() + wait.pollMs > deadline) return found;
    await sleep(wait.pollMs);
  }
}

const nodeListSchema = z.looseObject({
  items: z.array(
    z.looseObject({
      metadata: z.looseObject({ name: z.string(), labels: z.record(z.string(), z.string()).optional() }),
    }),
  ),
});

async function selectedNodes(api: KubePaths, selector: NodeSelector | undefined): Promise<string[]> {
  const list = parse(
    nodeListSchema,
    await api.getPath("/api/v1/nodes").catch(rethrow("cannot list the nodes")),
    "nodes",
  );
  return list.items
    .filter((n) => matchesNodeSelector(selector, { name: n.metadata.name, labels: n.metadata.labels ?? {} }))
    .map((n) => n.metadata.name);
}

async function agentPods(api: KubePaths, namespace: string) {
  const selector = Object.entries(AGENT_POD_LABELS)
    .map(([k, v]) => `${k}=${v}`)
    .join(",");
  const path = `/api/v1/namespaces/${encodeURIComponent(namespace)}/pods?labelSelector=${encodeURIComponent(selector)}`;
  const what = `the agent pods in namespace ${namespace}`;
  return parse(
    z.looseObject({ items: z.array(podSchema) }),
    await api.getPath(path).catch(rethrow(`cannot list ${what}`)),
    what,
  ).items;
}

async function agentToken(
  api: KubePaths,
  namespace: string,
  serviceAccount: string,
  node: string,
): Promise<string> {
  const audience = nodeAudience(node);
  const what = `a token for service account ${namespace}/${serviceAccount} (TokenRequest, audience ${audience})`;
  const response = await api
    .postPath(
      `/api/v1/namespaces/${encodeURIComponent(namespace)}/serviceaccounts/${encodeURIComponent(serviceAccount)}/token`,
      {
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [audience], expirationSeconds: AGENT_TOKEN_SECONDS },
      },
    )
    .catch(rethrow(`cannot get ${what}`));
  return parse(z.looseObject({ status: z.looseObject({ token: z.string().min(1) }) }), response, what).status
    .token;
}

function rethrow(what: string): (e: unknown) => never {
  return (e) => {
    throw new Error(`${what}: ${e instanceof Error ? e.message : String(e)}`);
  };
}

/** Parses an API answer; the error never quotes it (a TokenRequest answer holds a token). */
function parse<T>(schema: z.ZodType<T>, json: unknown, what: string): T {
  const r = schema.safeParse(json);
  if (!r.success)
    throw new Error(
      `the API server's answer for ${what} is not what Kubernetes sends: ${r.error.issues[0]?.path.join(".")}`,
    );
  return r.data;
}
