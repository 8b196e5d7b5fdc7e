import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { LVMNodeSpec, VolumeGroup } from "../../../src/api";
import type { HttpRequest, Transport } from "../../../src/kube/http";
import { parseNodeInventory } from "../../../src/inventory/parse";
import type { RawNodeInventory } from "../../../src/inventory/types";
import { planNode } from "../../../src/planner";
import { createProvider, UNKNOWN } from "./index";
import { pendingReason, planInventories } from "./inventory-plans";

/** A real recorded inventory (qemu guest, blank disks vda..vdc and sda), as `pulumi-lvm inventory` prints it. */
const raw = JSON.parse(
  readFileSync(join(__dirname, "../../../test/fixtures/inventory/guest-blank-paths.json"), "utf8"),
) as RawNodeInventory;
const NODE = raw.name; // "pl-guest"
const printed = (over: Partial<RawNodeInventory> = {}) => JSON.stringify({ nodes: [{ ...raw, ...over }] });

const selecting = (...values: string[]): VolumeGroup["deviceSelector"] => ({
  deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values }] }],
});
const specVg = { name: "vg-data", deviceSelector: selecting("/dev/vdb", "/dev/vdc") };
const spec: LVMNodeSpec = { volumeGroups: [specVg] };
/** The inventories map of NODE alone (as given, or as the state recorded it). */
const same = (text: string) => ({ [NODE]: text });

describe("planInventories", () => {
  it("plans a node from its recorded inventory: the claims, steps and hash the planner gives that inventory", () => {
    const r = planInventories([NODE], same(printed()), same(printed()), spec, UNKNOWN);
    expect(r.failures).toEqual([]);
    expect(r.pending).toEqual({});
    const p = r.plans[NODE]!;
    expect(p.claimed).toEqual([
      "/dev/vdb → vg-data (new volume group)",
      "/dev/vdc → vg-data (new volume group)",
    ]);
    expect(p.actions.map((a) => a.split(":")[0])).toEqual(
      expect.arrayContaining(["pvcreate /dev/vdb", "pvcreate /dev/vdc", "vgcreate vg-data"]),
    );
    expect(p.hash).toBe(planNode(parseNodeInventory(raw), spec, {}).hash);
  });

  it("uses the agent's recorded plan options: an lvmd.yaml already written changes the plan and its hash", () => {
    // No device to claim: only a differing lvmd.yaml on the host gives the plan a step.
    const spec: LVMNodeSpec = { volumeGroups: [{ ...specVg, deviceSelector: selecting("/dev/sdz") }] };
    const bare = planInventories([NODE], same(printed()), same(printed()), spec, UNKNOWN).plans[NODE]!;
    expect(bare.steps).toBe(0);
    const agentPlanOptions = {
      lvmdConfigPath: "/etc/topolvm/lvmd.yaml",
      currentLvmdConfig: { "device-classes": [{ name: "other", "volume-group": "vg-other" }] },
      adoptOrphanPvs: [],
    };
    const withOptions = planInventories(
      [NODE],
      same(printed({ agentPlanOptions })),
      same(printed({ agentPlanOptions })),
      spec,
      UNKNOWN,
    );
    expect(withOptions.failures).toEqual([]);
    const p = withOptions.plans[NODE]!;
    expect(p.actions).toEqual([expect.stringMatching(/^write-lvmd-config/)]);
    expect(p.hash).not.toBe(bare.hash);
    expect(p.hash).toBe(
      planNode(parseNodeInventory(raw), spec, {
        lvmdConfigPath: "/etc/topolvm/lvmd.yaml",
        currentLvmdConfig: agentPlanOptions.currentLvmdConfig,
        adoptOrphanPvs: [],
      }).hash,
    );
  });

  it("a node whose inventory is not known yet, or not yet in the state, is pending, and says why in words", () => {
    const inventories = { [NODE]: printed(), "edge-2": UNKNOWN, "edge-3": printed({ name: "edge-3" }) };
    const r = planInventories([NODE, "edge-2", "edge-3"], inventories, same(printed()), spec, UNKNOWN);
    expect(Object.keys(r.plans)).toEqual([NODE]);
    expect(r.pending).toEqual({
      "edge-2": pendingReason("edge-2", false),
      "edge-3": pendingReason("edge-3", true),
    });
    expect(r.pending["edge-2"]).toMatch(/^plan not known yet: the inventory of edge-2 is collected/);
    expect(r.pending["edge-3"]).toMatch(/^plan not shown yet: the inventory of edge-3 was collected after/);
    expect(r.failures).toEqual([]);
    // Recorded, but another one now (collected again): pending until the state holds the new one.
    const again = planInventories(
      [NODE],
      same(printed({ labels: { a: "b" } })),
      same(printed()),
      spec,
      UNKNOWN,
    );
    expect(again.plans).toEqual({});
    expect(again.pending).toEqual({ [NODE]: pendingReason(NODE, true) });
  });

  test.each([
    [
      "an agent without an inventory",
      [NODE, "edge-2"],
      { [NODE]: printed() },
      "inventories",
      /^node edge-2 has an agent but no inventory/,
    ],
    [
      "an inventory without an agent",
      [NODE],
      { [NODE]: printed(), "edge-9": printed() },
      "inventories.edge-9",
      /^node edge-9 has an inventory but no agent/,
    ],
    [
      "output that is not JSON",
      [NODE],
      { [NODE]: "sudo: a password is required" },
      `inventories.${NODE}`,
      /not JSON/,
    ],
    [
      "JSON that is not an inventory file",
      [NODE],
      { [NODE]: JSON.stringify({ url: "x" }) },
      `inventories.${NODE}`,
      /must be \{"nodes": \[<one node>\]\}/,
    ],
    [
      "an inventory recorded on another node",
      [NODE],
      { [NODE]: printed({ name: "edge-7" }) },
      `inventories.${NODE}`,
      /recorded on node "edge-7", not pl-guest/,
    ],
    [
      "an inventory whose lsblk is not lsblk's JSON",
      [NODE],
      { [NODE]: printed({ lsblk: { nothing: true } }) },
      `inventories.${NODE}`,
      /^node pl-guest: .*lsblk/,
    ],
    [
      "recorded plan options of the wrong kind",
      [NODE],
      {
        [NODE]: printed({
          agentPlanOptions: { lvmdConfigPath: "lvmd.yaml", currentLvmdConfig: null, adoptOrphanPvs: [] },
        }),
      },
      `inventories.${NODE}`,
      /agentPlanOptions\.lvmdConfigPath: must be an absolute path/,
    ],
  ])(
    "%s is a failure naming the node and the property, and no plan",
    (_what, nodes, inventories, property, reason) => {
      const r = planInventories(nodes, inventories, inventories, spec, UNKNOWN);
      expect(r.failures).toEqual([{ property, reason: expect.stringMatching(reason) }]);
      const failing = property === "inventories" ? "edge-2" : property.slice("inventories.".length);
      expect(Object.keys(r.plans)).not.toContain(failing);
    },
  );
});

/** An agent that answers /v1/apply and records what it was sent; anything else fails the test. */
function applyingAgent(calls: { url: string; body: unknown }[]): Transport {
  return async (request: HttpRequest) => {
    const url = String(request.url);
    if (!url.endsWith("/v1/apply")) throw new Error(`unexpected call to ${url}`);
    const body = JSON.parse(String(request.body)) as { planHash: string };
    calls.push({ url, body });
    return {
      status: 200,
      headers: {},
      body: JSON.stringify({
        operation: "op-1",
        kind: "apply",
        node: NODE,
        approvedHash: body.planHash,
        planHash: body.planHash,
        steps: [
          {
            index: 0,
            op: "pvcreate",
            argv: ["pvcreate", "/dev/vdb"],
            outcome: "done",
            reason: "r",
            durationMs: 5,
          },
        ],
        blocked: [],
      }),
    };
  };
}

describe("NodeSetDisks with inventories (provider methods)", () => {
  const base = (over: Record<string, unknown> = {}) => ({
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec,
    agents: { [NODE]: { url: "https://127.0.0.1:9443", token: "t" } },
    inventories: { [NODE]: printed() },
    ...over,
  });

  it("the first preview (agents and inventory unknown) says in the overview that the plan is not known yet; no agent is asked", async () => {
    const provider = createProvider({ transport: applyingAgent([]) });
    const result = await provider.check!(
      {},
      base({ agents: { [NODE]: { url: UNKNOWN, token: UNKNOWN } }, inventories: { [NODE]: UNKNOWN } }),
    );
    expect(result.failures).toBeUndefined();
    expect(result.inputs.planOverview).toEqual([`${NODE}: ${pendingReason(NODE, false)}`]);
    expect(result.inputs.plans).toEqual({});
    expect(result.inputs.pending).toEqual({ [NODE]: pendingReason(NODE, false) });
  });

  it("the whole inventories map unknown: the same words per agent's node, the map passed through unknown", async () => {
    const provider = createProvider({ transport: applyingAgent([]) });
    const result = await provider.check!({}, base({ inventories: UNKNOWN }));
    expect(result.failures).toBeUndefined();
    expect(result.inputs.planOverview).toEqual([`${NODE}: ${pendingReason(NODE, false)}`]);
    expect(result.inputs.inventories).toBe(UNKNOWN);
  });

  it("a preview with the inventory the state holds shows the plan, even with the agent's endpoint unknown", async () => {
    const provider = createProvider({ transport: applyingAgent([]) });
    const result = await provider.check!(
      base(),
      base({ agents: { [NODE]: { url: UNKNOWN, token: UNKNOWN } } }),
    );
    expect(result.failures).toBeUndefined();
    const plans = result.inputs.plans as Record<string, { claimed: string[]; steps: number }>;
    expect(plans[NODE]!.claimed).toHaveLength(2);
    expect(result.inputs.planOverview).toEqual([`${NODE}: ${plans[NODE]!.steps} steps (claims 2)`]);
  });

  it("an inventory the state does not hold yet is recorded, not planned: the node is pending, no agent is called", async () => {
    const calls: { url: string; body: unknown }[] = [];
    const provider = createProvider({ transport: applyingAgent(calls) });
    const checked = await provider.check!({}, base());
    expect(checked.failures).toBeUndefined();
    expect(checked.inputs.plans).toEqual({});
    expect(checked.inputs.planOverview).toEqual([`${NODE}: ${pendingReason(NODE, true)}`]);
    const created = await provider.create(checked.inputs);
    expect(calls).toEqual([]);
    expect(created.outs.nodes[NODE]).toEqual({
      selected: true,
      planHash: "",
      stepsDone: 0,
      stepsSkipped: 0,
      blocked: [],
      pending: pendingReason(NODE, true),
    });
    expect(created.outs.inventories).toEqual(same(printed()));
    // Collected again (another update): pending again, keeping what was applied before.
    const state = {
      ...created.outs,
      nodes: { [NODE]: { selected: true, planHash: "h0", stepsDone: 3, stepsSkipped: 0, blocked: [] } },
    };
    const recollected = await provider.check!(
      state,
      base({ inventories: same(printed({ labels: { a: "b" } })) }),
    );
    expect(recollected.inputs.plans).toEqual({});
    const updated = await provider.update!("lvm-system/edge", state, recollected.inputs);
    expect(calls).toEqual([]);
    expect(updated.outs!.nodes[NODE]).toMatchObject({
      planHash: "h0",
      stepsDone: 3,
      pending: pendingReason(NODE, true),
    });
  });

  it("apply never uses a plan whose inventory the state did not hold, whatever the plans say", async () => {
    const calls: { url: string; body: unknown }[] = [];
    const provider = createProvider({ transport: applyingAgent(calls) });
    const checked = (await provider.check!(base(), base())).inputs;
    expect(Object.keys(checked.plans as object)).toEqual([NODE]);
    const created = await provider.create(checked);
    expect(calls).toEqual([]);
    expect(created.outs.nodes[NODE].pending).toBe(pendingReason(NODE, true));
  });

  it("the inventory the state already held (so the preview showed its plan) is applied with that plan's hash", async () => {
    const calls: { url: string; body: { planHash: string } }[] = [];
    const provider = createProvider({ transport: applyingAgent(calls as { url: string; body: unknown }[]) });
    const checked = (await provider.check!(base(), base())).inputs;
    const hash = (checked.plans as Record<string, { hash: string }>)[NODE]!.hash;
    const updated = await provider.update!("lvm-system/edge", { ...checked, nodes: {} }, checked);
    expect(calls.map((c) => [c.url, c.body.planHash])).toEqual([["https://127.0.0.1:9443/v1/apply", hash]]);
    expect(updated.outs!.nodes[NODE]).toEqual({
      selected: true,
      planHash: hash,
      operation: "op-1",
      stepsDone: 1,
      stepsSkipped: 0,
      blocked: [],
    });
  });

  it("a plan from this inventory applied already: no changes in preview, and the up calls no agent (the inventory is as of before that apply)", async () => {
    const calls: { url: string; body: unknown }[] = [];
    const provider = createProvider({ transport: applyingAgent(calls) });
    const checked = (await provider.check!(base(), base())).inputs;
    const hash = (checked.plans as Record<string, { hash: string }>)[NODE]!.hash;
    const applied = {
      selected: true,
      planHash: hash,
      operation: "op-1",
      stepsDone: 3,
      stepsSkipped: 0,
      blocked: [],
    };
    const state = { ...checked, nodes: { [NODE]: applied } };
    expect((await provider.diff!("lvm-system/edge", state, checked)).changes).toBe(false);
    const updated = await provider.update!("lvm-system/edge", state, checked);
    expect(calls).toEqual([]);
    expect(updated.outs!.nodes[NODE]).toEqual(applied);
    // Not when that apply failed, or applied another plan: then there is work.
    for (const outcome of [
      { ...applied, error: "node edge-1: refused" },
      { ...applied, planHash: "other" },
    ])
      expect(
        (await provider.diff!("lvm-system/edge", { ...checked, nodes: { [NODE]: outcome } }, checked))
          .changes,
      ).toBe(true);
  });

  it("inventories without agents (cluster mode) are refused, naming the property", async () => {
    const provider = createProvider({ transport: applyingAgent([]) });
    const { agents: _a, ...rest } = base();
    const result = await provider.check!({}, { ...rest, cluster: { kubeconfig: "k", serviceAccount: "s" } });
    expect(result.failures).toEqual(
      expect.arrayContaining([{ property: "inventories", reason: expect.stringMatching(/needs agents/) }]),
    );
  });
});
