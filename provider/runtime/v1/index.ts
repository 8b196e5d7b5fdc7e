import type * as pulumi from "@pulumi/pulumi";
import { deletionPolicyOf } from "../../../src/api";
import { agentClient, AgentCallError, type AgentClient } from "../../../src/agent-client/agent-client";
import { agentConcurrencyFrom, mapLimited } from "../../../src/agent-client/concurrency";
import { httpTransport, type Transport } from "../../../src/kube/http";
import { checkInventories, pendingReason } from "./inventory-plans";
import { locateAgents, type Locate } from "./locate-agents";
import { readyWaitFrom, type ReadyWait } from "./cluster-agents";
import { applyOutputs, sortKeys, type ApplyResult } from "./partial-failure";
import { planOverview } from "./plan-overview";
import { summarizePlan, type PlanSummary } from "./plan-summary";
import { sealSecrets, unseal } from "./secrets";
import { parseInputs, requireInputs, type Inputs, type NodeOutcome, type VolumeGroupOutcome } from "./state";

/**
 * Runtime v1 of the NodeSetDisks dynamic provider: all of its logic. provider/provider.ts loads this
 * module by version when the engine calls a method, so a state written with v1 is always handled by
 * v1, whatever version of the package is installed. Change behaviour in a new version (v2/), never
 * here; compatible additions (cluster mode, recording partial applies) keep every v1 state valid.
 */

/** What the runtime needs from outside. */
export interface RuntimeDeps {
  /** @default the real HTTP transport (node:http's global agent: keep-alive, connections reused) */
  readonly transport?: Transport;
  /**
   * How many agents check and refresh ask at a time (src/agent-client/concurrency.ts).
   * @default $PULUMI_LVM_AGENT_CONCURRENCY, else 8
   */
  readonly agentConcurrency?: number;
  /**
   * How long cluster mode waits for agent pods that exist but are not Ready (cluster-agents.ts).
   * @default $PULUMI_LVM_AGENT_READY_WAIT_SECONDS, else 120 s
   */
  readonly readyWait?: ReadyWait;
}

/** The value the engine sends for inputs not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export function createProvider(deps: RuntimeDeps = {}): pulumi.dynamic.ResourceProvider {
  const transport = deps.transport ?? httpTransport;
  const client = agentClient(transport);
  const bound = deps.agentConcurrency ?? agentConcurrencyFrom(process.env);
  const readyWait = deps.readyWait ?? readyWaitFrom(process.env);
  const locate: Locate = (inputs, nodes) => locateAgents(transport, inputs, nodes, readyWait);
  // Everything handed back to the engine carries the credentials as secrets (secrets.ts).
  const seal = <T extends Record<string, unknown>>(props: T) => sealSecrets(props, UNKNOWN);
  return {
    check: async (olds, news) => {
      const result = await check(
        client,
        locate,
        bound,
        unseal(news) as Record<string, unknown>,
        unseal(olds ?? {}) as Record<string, unknown>,
      );
      return { ...result, inputs: seal(result.inputs) };
    },
    diff: async (_id, olds, news) =>
      diff(unseal(olds) as Record<string, unknown>, unseal(news) as Record<string, unknown>),
    create: async (inputs) => {
      const checked = requireInputs(inputs, "create");
      const id = `${checked.namespace}/${checked.nodeSetName}`;
      return { id, outs: applyOutputs(id, inputs, await apply(client, locate, checked, {}, {}), seal) };
    },
    update: async (id, olds, news) => {
      const previous = unseal(olds) as { nodes?: unknown; inventories?: unknown };
      const before = (previous.nodes ?? {}) as Record<string, NodeOutcome>;
      const seen = (previous.inventories ?? {}) as Record<string, string>;
      const result = await apply(client, locate, requireInputs(news, "update"), before, seen);
      return { outs: applyOutputs(id, news, result, seal) };
    },
    read: async (id, props) => ({
      id,
      props: seal({
        ...props,
        nodes: await read(client, locate, bound, requireInputs(props, "refresh"), props.nodes),
      }),
    }),
    delete: async (_id, props) => teardown(client, locate, requireInputs(props, "delete")),
  };
}

/**
 * Asks every node's agent for its dry-run plan and puts a readable summary of each into the inputs,
 * so the preview shows, per node, the devices claimed, extended, removed and wiped, and the devices
 * left out with the reasons; `planOverview` folds them into one line per node with work, and one
 * line for the converged and one for the unselected nodes (readable at 50+ nodes). The nodes: the
 * `agents` map (sandbox), or those the nodeSelector picks in the cluster, asked `bound` at a time.
 * An agent that cannot plan, or cannot be found, is a check failure naming the node.
 */
async function check(
  client: AgentClient,
  locate: Locate,
  bound: number,
  news: Record<string, unknown>,
  olds: Record<string, unknown> = {},
): Promise<pulumi.dynamic.CheckResult> {
  if (news.inventories !== undefined) return checkInventories(news, olds, UNKNOWN);
  if (JSON.stringify(news).includes(UNKNOWN)) return { inputs: news };
  const { plans: _stale, planOverview: _staleOverview, ...fresh } = news;
  const parsed = parseInputs(fresh);
  if (!parsed.ok)
    return { inputs: news, failures: parsed.problems.map((p) => ({ property: p.path, reason: p.message })) };
  const inputs = parsed.inputs;
  const plans: Record<string, PlanSummary> = {};
  const failures: pulumi.dynamic.CheckFailure[] = [];
  try {
    const located = await locate(inputs);
    for (const m of located.missing)
      failures.push({ property: propertyOf(inputs, m.node), reason: m.message });
    await mapLimited(located.endpoints, bound, async (ep) => {
      try {
        plans[ep.node] = summarizePlan(await client.plan(ep, inputs.spec));
      } catch (e) {
        failures.push({ property: propertyOf(inputs, ep.node), reason: (e as Error).message });
      }
    });
  } catch (e) {
    failures.push({ property: "cluster", reason: (e as Error).message });
  }
  failures.sort((a, b) => a.reason.localeCompare(b.reason));
  return {
    inputs: { ...fresh, planOverview: planOverview(plans), plans: sortKeys(plans) },
    ...(failures.length ? { failures } : {}),
  };
}

/** The input a node's problem belongs to: its agent (sandbox) or the cluster settings. */
function propertyOf(inputs: Inputs, node: string): string {
  return inputs.agents ? `agents.${node}` : "cluster";
}

/**
 * There is work when the spec, the node set's identity, the agents or the cluster settings changed
 * (a new kubeconfig is an update that touches no disk, so that a later destroy uses it), or when
 * any node's fresh plan has steps. Never a replacement: replacing would tear down (deletionPolicy Delete) and
 * rebuild disks that hold data.
 */
export function diff(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): pulumi.dynamic.DiffResult {
  if (JSON.stringify(news).includes(UNKNOWN)) return { replaces: [] };
  // inventories: the state must hold the inventory each plan was made from (apply's `seen`).
  const changed = ["nodeSetName", "namespace", "spec", "agents", "cluster", "inventories"].some(
    (key) => JSON.stringify(olds[key]) !== JSON.stringify(news[key]),
  );
  const plans = (news.plans ?? {}) as Record<string, PlanSummary>;
  const before = (olds.nodes ?? {}) as Record<string, NodeOutcome>;
  const inventories = (news.inventories ?? {}) as Record<string, string>;
  const work = Object.entries(plans).some(
    ([node, p]) =>
      p.selected && p.steps > 0 && !(inventories[node] !== undefined && appliedAlready(p, before[node])),
  );
  return { changes: changed || work, replaces: [], deleteBeforeReplace: false };
}

/**
 * A plan made from a recorded inventory that was applied already: the inventory still describes the
 * disks as they were before that apply, so its plan keeps its steps until the inventory is collected
 * again; applying it again would only be refused (PlanChanged).
 */
function appliedAlready(plan: PlanSummary, outcome: NodeOutcome | undefined): boolean {
  return outcome !== undefined && outcome.planHash === plan.hash && !outcome.error && !outcome.pending;
}

/**
 * Applies each selected node's plan with the hash seen at check, all nodes at once. A node whose
 * disks changed since (409 PlanChanged) is not touched. The nodes: the `agents` map (sandbox), or
 * those planned at check (cluster: exactly the reviewed set). Only nodes with steps are called.
 * With recorded inventories, a node is applied only when its inventory is the one `seen` (the
 * resource's state before this update): then this update's preview knew it and showed its plan. An
 * inventory collected during this update was unknown to its preview, so that node is left alone
 * and recorded as `pending` until a preview has shown its plan.
 */
async function apply(
  client: AgentClient,
  locate: Locate,
  inputs: Inputs,
  before: Readonly<Record<string, NodeOutcome>>,
  seen: Readonly<Record<string, string>>,
): Promise<ApplyResult> {
  const outcomes: Record<string, NodeOutcome> = {};
  const failures: Record<string, { message: string; outcome: NodeOutcome }> = {};
  const changed: string[] = [];
  const fail = (node: string, message: string) => {
    const plan = inputs.plans?.[node];
    const notApplied = {
      selected: plan?.selected ?? true,
      planHash: "",
      stepsDone: 0,
      stepsSkipped: 0,
      blocked: plan?.blocked ?? [],
    };
    failures[node] = { message, outcome: before[node] ?? notApplied };
  };
  const work: string[] = [];
  for (const node of Object.keys(inputs.agents ?? inputs.plans ?? {})) {
    const plan = inputs.plans?.[node];
    const inventory = inputs.inventories?.[node];
    const pending = inputs.pending?.[node];
    if (inventory !== undefined && (pending !== undefined || seen[node] !== inventory))
      outcomes[node] = {
        ...(before[node] ?? { selected: true, planHash: "", stepsDone: 0, stepsSkipped: 0, blocked: [] }),
        pending: pending ?? pendingReason(node, true),
      };
    else if (!plan) fail(node, `node ${node}: no plan was made for it; run pulumi preview, then pulumi up`);
    else if (inventory !== undefined && appliedAlready(plan, before[node])) outcomes[node] = before[node]!;
    else if (!plan.selected || plan.steps === 0)
      outcomes[node] = {
        selected: plan.selected,
        planHash: plan.hash,
        stepsDone: 0,
        stepsSkipped: 0,
        blocked: plan.blocked,
      };
    else work.push(node);
  }
  if (work.length) {
    const located = await locate(inputs, work).catch((e: Error) => {
      throw new Error(`applying node set ${inputs.namespace}/${inputs.nodeSetName} failed: ${e.message}`);
    });
    for (const m of located.missing) fail(m.node, m.message);
    await Promise.all(
      located.endpoints.map(async (ep) => {
        const plan = inputs.plans![ep.node]!;
        try {
          const result = await client.apply(ep, inputs.spec, plan.hash);
          outcomes[ep.node] = {
            selected: plan.selected,
            planHash: plan.hash,
            operation: result.operation,
            stepsDone: result.steps.filter((s) => s.outcome === "done").length,
            stepsSkipped: result.steps.filter((s) => s.outcome === "skipped").length,
            blocked: plan.blocked,
          };
          changed.push(ep.node);
        } catch (e) {
          fail(ep.node, describeApplyFailure(e, plan, inputs.inventories?.[ep.node] !== undefined));
        }
      }),
    );
  }
  return { outcomes, failures, changed };
}

/** The error text for a node whose apply failed; a changed plan says how to continue. */
export function describeApplyFailure(e: unknown, plan: PlanSummary, fromInventory = false): string {
  if (e instanceof AgentCallError && e.code === "PlanChanged")
    return fromInventory
      ? `${e.message}\n  nothing was done on node ${e.node}: its disks no longer give the plan (${plan.hash}) reviewed from its recorded inventory; collect the inventory again (change its HostInventory's \`revision\`, or pulumi up --replace its command), then pulumi preview to review the new plan, then pulumi up`
      : `${e.message}\n  nothing was done on node ${e.node}: its disks changed after the plan (${plan.hash}) was reviewed; run pulumi preview to review the new plan, then pulumi up`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * Refresh: each node's LVMNode state, its volume groups (state, physical volumes, and what is still
 * to do or wrong) and its last operation, as its agent reports them now. What the last apply did is
 * kept; whatever the previous refresh reported is replaced, so a change made by hand on a node
 * shows up in `pulumi refresh` as a change of these outputs. The nodes: the `agents` map, or those
 * the nodeSelector picks now.
 */
async function read(
  client: AgentClient,
  locate: Locate,
  bound: number,
  inputs: Inputs,
  previous: unknown,
): Promise<Record<string, NodeOutcome>> {
  const before = (previous ?? {}) as Record<string, NodeOutcome>;
  const outcomes: Record<string, NodeOutcome> = {};
  const located = await locate(inputs);
  const failures = located.missing.map((m) => m.message);
  await mapLimited(located.endpoints, bound, async (ep) => {
    try {
      outcomes[ep.node] = refreshed(before[ep.node], await client.status(ep));
    } catch (e) {
      failures.push((e as Error).message);
    }
  });
  if (failures.length)
    throw new Error(
      `refreshing node set ${inputs.namespace}/${inputs.nodeSetName} failed:\n${failures.sort().join("\n")}`,
    );
  return sortKeys(outcomes);
}

/** A node's outcome after a refresh: what the last apply did, and the agent's status now. */
function refreshed(
  before: NodeOutcome | undefined,
  status: Awaited<ReturnType<AgentClient["status"]>>,
): NodeOutcome {
  const last = status.lastOperation;
  const {
    state: _state,
    volumeGroups: _volumeGroups,
    lastOperation: _lastOperation,
    ...applied
  } = before ?? { selected: true, planHash: "", stepsDone: 0, stepsSkipped: 0, blocked: [] };
  const volumeGroups = Object.fromEntries(
    (status.status.volumeGroups ?? []).map((vg): [string, VolumeGroupOutcome] => [
      vg.name,
      {
        state: vg.state,
        members: (vg.devices?.included ?? []).map((d) => d.kname).sort(),
        ...(vg.message ? { message: vg.message } : {}),
      },
    ]),
  );
  return {
    ...applied,
    ...(status.status.state ? { state: status.status.state } : {}),
    volumeGroups,
    ...(last
      ? {
          lastOperation: `${last.kind} ${last.operation} ${last.result}${last.error ? `: ${last.error.message}` : ""}`,
        }
      : {}),
  };
}

/**
 * deletionPolicy Retain (the default): nothing happens on any disk. Delete: each applied node's
 * agent (after its status shows it is that node's agent) tears down the spec's thin pools and volume groups, never forced, so a volume group that
 * still holds logical volumes stays and the delete fails naming the node and the volumes.
 */
async function teardown(client: AgentClient, locate: Locate, inputs: Inputs): Promise<void> {
  if (deletionPolicyOf(inputs.spec) === "Retain") return;
  const nodes = Object.keys(inputs.agents ?? inputs.plans ?? {}).filter(
    (node) => inputs.plans?.[node]?.selected !== false,
  );
  const what = `tearing down node set ${inputs.namespace}/${inputs.nodeSetName} (deletionPolicy Delete) failed; nothing was forced:`;
  const located = await locate(inputs, nodes).catch((e: Error) => {
    throw new Error(`${what}\n${e.message}`);
  });
  const failures = located.missing.map((m) => m.message);
  await Promise.all(
    located.endpoints.map(async (ep) => {
      try {
        // Read-only first: an agent that answers for another node (a wrong URL or pod) is never
        // asked to tear anything down (older agents do not check X-Pulumi-Lvm-Target themselves).
        await client.status(ep);
        await client.teardown(ep, inputs.spec);
      } catch (e) {
        failures.push((e as Error).message);
      }
    }),
  );
  if (failures.length) throw new Error(`${what}\n${failures.sort().join("\n")}`);
}
