import type * as pulumi from "@pulumi/pulumi";
import { deletionPolicyOf } from "../../../src/api";
import {
  agentClient,
  AgentCallError,
  type AgentClient,
  type AgentEndpoint,
  type Transport,
} from "./agent-client";
import { summarizePlan, type PlanSummary } from "./plan-summary";
import { sealTokens, unseal } from "./secrets";
import { parseInputs, requireInputs, type Inputs, type NodeOutcome, type VolumeGroupOutcome } from "./state";

/**
 * Runtime v1 of the NodeSetDisks dynamic provider: all of its logic. provider/provider.ts loads this
 * module by version when the engine calls a method, so a state written with v1 is always handled by
 * v1, whatever version of the package is installed. Change behaviour in a new version (v2/), never here.
 */

/** What the runtime needs from outside. @default the real HTTP transport */
export interface RuntimeDeps {
  readonly transport?: Transport;
}

/** The value the engine sends for inputs not known yet (during preview). */
export const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

export function createProvider(deps: RuntimeDeps = {}): pulumi.dynamic.ResourceProvider {
  const client = agentClient(deps.transport);
  // Everything handed back to the engine carries the agent tokens as secrets (secrets.ts).
  const seal = <T extends Record<string, unknown>>(props: T) => sealTokens(props, UNKNOWN);
  return {
    check: async (_olds, news) => {
      const result = await check(client, unseal(news) as Record<string, unknown>);
      return { ...result, inputs: seal(result.inputs) };
    },
    diff: async (_id, olds, news) =>
      diff(unseal(olds) as Record<string, unknown>, unseal(news) as Record<string, unknown>),
    create: async (inputs) => {
      const checked = requireInputs(inputs, "create");
      return {
        id: `${checked.namespace}/${checked.nodeSetName}`,
        outs: seal({ ...inputs, nodes: await apply(client, checked) }),
      };
    },
    update: async (_id, _olds, news) => ({
      outs: seal({ ...news, nodes: await apply(client, requireInputs(news, "update")) }),
    }),
    read: async (id, props) => ({
      id,
      props: seal({ ...props, nodes: await read(client, requireInputs(props, "refresh"), props.nodes) }),
    }),
    delete: async (_id, props) => teardown(client, requireInputs(props, "delete")),
  };
}

/**
 * Asks every node's agent for its dry-run plan and puts a readable summary of each into the inputs,
 * so the preview shows, per node, the devices claimed, extended, removed and wiped, and the devices
 * left out with the reasons. An agent that cannot plan is a check failure naming the node.
 */
async function check(
  client: AgentClient,
  news: Record<string, unknown>,
): Promise<pulumi.dynamic.CheckResult> {
  if (JSON.stringify(news).includes(UNKNOWN)) return { inputs: news };
  const { plans: _stale, ...fresh } = news;
  const parsed = parseInputs(fresh);
  if (!parsed.ok)
    return { inputs: news, failures: parsed.problems.map((p) => ({ property: p.path, reason: p.message })) };
  const plans: Record<string, PlanSummary> = {};
  const failures: pulumi.dynamic.CheckFailure[] = [];
  await Promise.all(
    endpoints(parsed.inputs).map(async (ep) => {
      try {
        plans[ep.node] = summarizePlan(await client.plan(ep, parsed.inputs.spec));
      } catch (e) {
        failures.push({ property: `agents.${ep.node}`, reason: (e as Error).message });
      }
    }),
  );
  return { inputs: { ...fresh, plans: sortKeys(plans) }, ...(failures.length ? { failures } : {}) };
}

/**
 * There is work when the spec, the node set's identity or the agents changed, or when any node's
 * fresh plan has steps. Never a replacement: replacing would tear down (deletionPolicy Delete) and
 * rebuild disks that hold data.
 */
export function diff(
  olds: Record<string, unknown>,
  news: Record<string, unknown>,
): pulumi.dynamic.DiffResult {
  if (JSON.stringify(news).includes(UNKNOWN)) return { replaces: [] };
  const changed = ["nodeSetName", "namespace", "spec", "agents"].some(
    (key) => JSON.stringify(olds[key]) !== JSON.stringify(news[key]),
  );
  const plans = (news.plans ?? {}) as Record<string, PlanSummary>;
  const work = Object.values(plans).some((p) => p.selected && p.steps > 0);
  return { changes: changed || work, replaces: [], deleteBeforeReplace: false };
}

/**
 * Applies each selected node's plan with the hash seen at check, all nodes at once. A node whose
 * disks changed since (409 PlanChanged) is not touched; every failing node is named in one error.
 */
async function apply(client: AgentClient, inputs: Inputs): Promise<Record<string, NodeOutcome>> {
  const outcomes: Record<string, NodeOutcome> = {};
  const failures: string[] = [];
  await Promise.all(
    endpoints(inputs).map(async (ep) => {
      const plan = inputs.plans?.[ep.node];
      if (!plan)
        return failures.push(`node ${ep.node}: no plan was made for it; run pulumi preview, then pulumi up`);
      const base = {
        selected: plan.selected,
        planHash: plan.hash,
        stepsDone: 0,
        stepsSkipped: 0,
        blocked: plan.blocked,
      };
      if (!plan.selected || plan.steps === 0) return (outcomes[ep.node] = base);
      try {
        const result = await client.apply(ep, inputs.spec, plan.hash);
        outcomes[ep.node] = {
          ...base,
          operation: result.operation,
          stepsDone: result.steps.filter((s) => s.outcome === "done").length,
          stepsSkipped: result.steps.filter((s) => s.outcome === "skipped").length,
        };
      } catch (e) {
        failures.push(describeApplyFailure(e, plan));
      }
    }),
  );
  if (failures.length) {
    const done = Object.keys(outcomes).sort();
    throw new Error(
      `applying node set ${inputs.namespace}/${inputs.nodeSetName} failed:\n${failures.sort().join("\n")}${done.length ? `\napplied: ${done.join(", ")}` : ""}`,
    );
  }
  return sortKeys(outcomes);
}

/** The error text for a node whose apply failed; a changed plan says how to continue. */
export function describeApplyFailure(e: unknown, plan: PlanSummary): string {
  if (e instanceof AgentCallError && e.code === "PlanChanged")
    return `${e.message}\n  nothing was done on node ${e.node}: its disks changed after the plan (${plan.hash}) was reviewed; run pulumi preview to review the new plan, then pulumi up`;
  return e instanceof Error ? e.message : String(e);
}

/**
 * Refresh: each node's LVMNode state, its volume groups (state, physical volumes, and what is still
 * to do or wrong) and its last operation, as its agent reports them now. What the last apply did is
 * kept; whatever the previous refresh reported is replaced, so a change made by hand on the node
 * shows up in `pulumi refresh` as a change of these outputs.
 */
async function read(
  client: AgentClient,
  inputs: Inputs,
  previous: unknown,
): Promise<Record<string, NodeOutcome>> {
  const before = (previous ?? {}) as Record<string, NodeOutcome>;
  const outcomes: Record<string, NodeOutcome> = {};
  await Promise.all(
    endpoints(inputs).map(async (ep) => {
      const status = await client.status(ep);
      const last = status.lastOperation;
      const {
        state: _state,
        volumeGroups: _volumeGroups,
        lastOperation: _lastOperation,
        ...applied
      } = before[ep.node] ?? { selected: true, planHash: "", stepsDone: 0, stepsSkipped: 0, blocked: [] };
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
      outcomes[ep.node] = {
        ...applied,
        ...(status.status.state ? { state: status.status.state } : {}),
        volumeGroups,
        ...(last
          ? {
              lastOperation: `${last.kind} ${last.operation} ${last.result}${last.error ? `: ${last.error.message}` : ""}`,
            }
          : {}),
      };
    }),
  );
  return sortKeys(outcomes);
}

/**
 * deletionPolicy Retain (the default): nothing happens on any disk. Delete: each node's agent tears
 * down the spec's thin pools and volume groups, never forced, so a volume group that still holds
 * logical volumes stays and the delete fails naming the node and the volumes.
 */
async function teardown(client: AgentClient, inputs: Inputs): Promise<void> {
  if (deletionPolicyOf(inputs.spec) === "Retain") return;
  const failures: string[] = [];
  await Promise.all(
    endpoints(inputs)
      .filter((ep) => inputs.plans?.[ep.node]?.selected !== false)
      .map(async (ep) => {
        try {
          await client.teardown(ep, inputs.spec);
        } catch (e) {
          failures.push((e as Error).message);
        }
      }),
  );
  if (failures.length)
    throw new Error(
      `tearing down node set ${inputs.namespace}/${inputs.nodeSetName} (deletionPolicy Delete) failed; nothing was forced:\n${failures.sort().join("\n")}`,
    );
}

function endpoints(inputs: Inputs): AgentEndpoint[] {
  return Object.entries(inputs.agents)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([node, agent]) => ({
      node,
      url: agent.url,
      token: agent.token,
      ...(agent.ca ? { ca: agent.ca } : {}),
    }));
}

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
