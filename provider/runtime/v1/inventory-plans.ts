import type * as pulumi from "@pulumi/pulumi";
import type { LVMNodeSpec } from "../../../src/api";
import { parseNodeInventory } from "../../../src/inventory/parse";
import type { RawNodeInventory } from "../../../src/inventory/types";
import { planNode, recordedPlanOptions } from "../../../src/planner";
import { sortKeys } from "./partial-failure";
import { planOverview } from "./plan-overview";
import { summarizePlan, type PlanSummary } from "./plan-summary";
import { parseInputs } from "./state";

/**
 * Sandbox mode with recorded inventories (NodeSetDisks `inventories`, from HostInventory): each node is
 * planned here, purely, from the inventory its host printed (`pulumi-lvm inventory --agent-state-dir`)
 * instead of asking its agent. The same recorded inventory gives the same plan and hash at preview and
 * at `pulumi up`, and apply sends that hash, so the agent applies exactly the plan the preview showed
 * (its devices, with their identities) or refuses (409 PlanChanged) when its disks now plan otherwise.
 */

/** What planning the recorded inventories gave: plans, nodes not known yet, problems. */
export interface InventoryPlans {
  readonly plans: Record<string, PlanSummary>;
  /** Node → why its plan is not known yet (its inventory is collected by this update). */
  readonly pending: Record<string, string>;
  /** Problems, each naming its property (`inventories.<node>`) and the node. */
  readonly failures: { property: string; reason: string }[];
}

/**
 * Why a node's plan is not shown: its inventory is not known yet (`known` false: the first preview),
 * or it is known but not yet recorded in the resource's state (an update collects it: planning from it
 * now would be a plan that update's preview never showed). Said in the preview, not left blank.
 */
export function pendingReason(node: string, known: boolean): string {
  return known
    ? `plan not shown yet: the inventory of ${node} was collected after this node set last recorded one; this update records it and leaves the disks alone, the next pulumi preview shows the plan from it, and the pulumi up after that applies it`
    : `plan not known yet: the inventory of ${node} is collected over SSH during this update (HostInventory), so this preview cannot show its plan; that update leaves its disks alone, the next pulumi preview shows the plan from the inventory, and the pulumi up after that applies it`;
}

/**
 * Plans every node of `nodes` from its inventory; `unknownValue` is the engine's value for one not known
 * yet. Only an inventory the resource's state already holds (`recorded`) is planned: one that is
 * unknown or new makes the node pending. A node without an inventory, an inventory that is not
 * `pulumi-lvm inventory`'s output, or one recorded on another node is a failure naming the node.
 */
export function planInventories(
  nodes: readonly string[],
  inventories: Readonly<Record<string, string>>,
  recorded: Readonly<Record<string, string>>,
  spec: LVMNodeSpec,
  unknownValue: string,
): InventoryPlans {
  const out: InventoryPlans = { plans: {}, pending: {}, failures: [] };
  for (const node of nodes) {
    const text = inventories[node];
    const property = `inventories.${node}`;
    if (text === undefined)
      out.failures.push({
        property: "inventories",
        reason: `node ${node} has an agent but no inventory: give every node of agents its HostInventory (inventoriesOf)`,
      });
    else if (text === unknownValue) out.pending[node] = pendingReason(node, false);
    else {
      try {
        const raw = recordedInventory(node, text);
        const plan = summarizePlan(planNode(parseNodeInventory(raw), spec, recordedPlanOptions(raw)));
        if (recorded[node] === text) out.plans[node] = plan;
        else out.pending[node] = pendingReason(node, true);
      } catch (e) {
        out.failures.push({ property, reason: `node ${node}: ${(e as Error).message}` });
      }
    }
  }
  for (const node of Object.keys(inventories))
    if (!nodes.includes(node))
      out.failures.push({
        property: `inventories.${node}`,
        reason: `node ${node} has an inventory but no agent: it would be planned and never applied`,
      });
  return out;
}

/**
 * Check with recorded inventories: every node planned here from its inventory (inventory-plans.ts),
 * no agent asked, from the inventories the state (`olds`) already holds; the others are `pending`,
 * said in `planOverview`. Runs while the agents' endpoints are still unknown (the first preview,
 * before AgentHost has installed them).
 */
export function checkInventories(
  news: Record<string, unknown>,
  olds: Record<string, unknown>,
  unknownValue: string,
): pulumi.dynamic.CheckResult {
  const { plans: _stale, planOverview: _staleOverview, pending: _stalePending, ...fresh } = news;
  // The whole map unknown (the engine may send it so): every agent's inventory is unknown.
  const agentNodes = typeof news.agents === "object" && news.agents ? Object.keys(news.agents) : [];
  if (fresh.inventories === unknownValue && agentNodes.length === 0) return { inputs: news };
  const parsed = parseInputs(
    fresh.inventories === unknownValue
      ? { ...fresh, inventories: Object.fromEntries(agentNodes.map((n) => [n, unknownValue])) }
      : fresh,
  );
  if (!parsed.ok)
    return { inputs: news, failures: parsed.problems.map((p) => ({ property: p.path, reason: p.message })) };
  const { agents, inventories, spec } = parsed.inputs;
  const recorded = (olds.inventories ?? {}) as Record<string, string>;
  const planned = planInventories(Object.keys(agents ?? {}), inventories!, recorded, spec, unknownValue);
  const overview = [
    ...planOverview(planned.plans),
    ...Object.keys(planned.pending)
      .sort()
      .map((node) => `${node}: ${planned.pending[node]}`),
  ];
  planned.failures.sort((a, b) => a.reason.localeCompare(b.reason));
  return {
    inputs: {
      ...fresh,
      planOverview: overview,
      plans: sortKeys(planned.plans),
      ...(Object.keys(planned.pending).length ? { pending: sortKeys(planned.pending) } : {}),
    },
    ...(planned.failures.length ? { failures: planned.failures } : {}),
  };
}

/** The one node of `pulumi-lvm inventory`'s `{"nodes": [...]}`, recorded on `node`. */
function recordedInventory(node: string, text: string): RawNodeInventory {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new Error(
      `the inventory is not JSON (${(e as Error).message}): expected pulumi-lvm inventory's output`,
    );
  }
  const nodes = (doc as { nodes?: unknown } | null)?.nodes;
  if (!Array.isArray(nodes) || nodes.length !== 1)
    throw new Error(`the inventory must be {"nodes": [<one node>]}, as pulumi-lvm inventory prints it`);
  const raw = nodes[0] as RawNodeInventory;
  if (raw?.name !== node)
    throw new Error(
      `the inventory was recorded on node ${JSON.stringify(raw?.name)}, not ${node}: its --node must be the agent's node name`,
    );
  return raw;
}
