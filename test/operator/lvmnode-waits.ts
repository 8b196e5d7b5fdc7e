/**
 * One node's LVMNode in an agent cluster (agent-cluster.ts), read straight from the API server, and
 * the states the approval and discovery tests wait for on it: Ready with N devices, a plan waiting,
 * a stale approval refused, an approved plan applied, a used approval removed. Also what the node's
 * agent wiped (its command log).
 */
import { commandLog } from "../agent/command-log-reader";
import type { Json } from "../env/cluster";
import type { AgentCluster } from "./agent-cluster";
import { eventually, lvmNodesPath } from "./env";

/** The condition `type` of an object's status, or undefined. */
export const conditionOf = (o: Json, type: string): Json | undefined =>
  (o.status?.conditions ?? []).find((x: Json) => x.type === type);

export function lvmNodeWaits(c: AgentCluster, namespace: string, node: string) {
  /** The LVMNode, or an object with empty metadata while it does not exist. */
  const read = async (): Promise<Json> => {
    const r = await c.cp.request("GET", lvmNodesPath(namespace, node));
    return r.status === 200 ? r.body : { metadata: {} };
  };
  const until = (what: string, done: (n: Json) => boolean, timeoutMs = 60_000) =>
    eventually(
      `${node}: ${what}`,
      async () => {
        const n = await read();
        return done(n) ? n : undefined;
      },
      timeoutMs,
      200,
    );
  const included = (n: Json) => n.status?.volumeGroups?.[0]?.devices?.included?.length;
  return {
    read,
    /** The wipefs commands the node's agent ran (its dry runs left out). */
    wipes: () =>
      commandLog(c.scratch[node]!.path("commands.jsonl")).filter(
        (x) => x.tool === "wipefs" && !x.requested.includes("--no-act"),
      ),
    readyWith: (devices: number) =>
      until(`Ready with ${devices} device(s)`, (n) => n.status?.state === "Ready" && included(n) === devices),
    /** The LVMNode once a plan waits for an approval (status.pendingApproval). */
    planWaiting: () => until("a plan waits", (n) => !!n.status?.pendingApproval),
    staleApprovalRefused: () =>
      until(
        "the stale approval is refused",
        (n) => conditionOf(n, "AwaitingApproval")?.reason === "StaleApproval",
        30_000,
      ),
    /** The approved plan applied: `devices` in the group and nothing waiting; on a timeout, what the node shows. */
    approvedAndApplied: (devices: number) =>
      until("approved and applied", (n) => included(n) === devices && !n.status.pendingApproval).catch(
        async (e) => {
          const n = await read();
          throw new Error(
            `${(e as Error).message}: ${JSON.stringify({ annotations: n.metadata.annotations, conditions: n.status?.conditions, pending: n.status?.pendingApproval, vgs: n.status?.volumeGroups })}`,
          );
        },
      ),
    approvalRemoved: () =>
      until(
        "the used approval is removed",
        (n) => !n.metadata.annotations?.["lvm.topolvm.io/approve"],
        10_000,
      ),
  };
}
