/**
 * Two agent processes on one machine, each restricted to its own loop devices (--devices: an lvm
 * filter plus the runner's allow-list): each sees and touches only its own, checked with pvs/vgs
 * run by the test.
 */
import { randomBytes } from "node:crypto";
import {
  commandLog,
  isWrite,
  membersOf,
  pvs,
  planAndApply,
  request,
  Scratch,
  thickSpec,
  vgs,
  type AgentProcess,
} from "./harness";
import { agentFleet } from "../support/agent/testbed";

jest.setTimeout(120_000);

const fleet = agentFleet("isolation");
let scratch: Scratch;
let a: AgentProcess | undefined;
let b: AgentProcess | undefined;
let tokens: Record<string, string>;
let A1: string, A2: string, B1: string, B2: string;
const suffix = randomBytes(3).toString("hex");
const VGA = `agt-iso-a-${suffix}`;
const VGB = `agt-iso-b-${suffix}`;

beforeAll(async () => {
  scratch = fleet.scratch;
  tokens = { op: fleet.token };
  [A1, A2, B1, B2] = [scratch.loop(), scratch.loop(), scratch.loop(), scratch.loop()];
  [a, b] = await Promise.all([
    fleet.start(fleet.options("node-iso-a", [A1, A2])),
    fleet.start(fleet.options("node-iso-b", [B1, B2])),
  ]);
});

const apply = async (agent: AgentProcess, spec: unknown) =>
  (await planAndApply(agent.url, tokens.op!, spec)).plan;

describe("two agents on one machine", () => {
  it("each inventories only its own devices", async () => {
    const invA = (await request(a!.url, "GET", "/v1/inventory", { token: tokens.op })).json;
    const invB = (await request(b!.url, "GET", "/v1/inventory", { token: tokens.op })).json;
    expect(invA.devices.map((d: { kname: string }) => d.kname).sort()).toEqual([A1, A2].sort());
    expect(invB.devices.map((d: { kname: string }) => d.kname).sort()).toEqual([B1, B2].sort());
  });

  it("each builds its own volume group, side by side", async () => {
    await Promise.all([apply(a!, thickSpec(VGA, [A1, A2])), apply(b!, thickSpec(VGB, [B1, B2]))]);
    expect(membersOf([A1, A2, B1, B2], VGA)).toEqual([A1, A2].sort());
    expect(membersOf([A1, A2, B1, B2], VGB)).toEqual([B1, B2].sort());
  });

  it("an agent asked for another agent's device does not see it and writes nothing to it", async () => {
    const before = pvs([B1, B2]);
    const plan = await apply(a!, thickSpec(VGA, [A1, A2, B1]));
    expect(plan.actions).toEqual([]);
    expect(JSON.stringify(plan.volumeGroups[0].excluded)).toContain(B1);
    expect(pvs([B1, B2])).toEqual(before);
    const invA = (await request(a!.url, "GET", "/v1/inventory", { token: tokens.op })).json;
    expect(invA.vgs.map((v: { name: string }) => v.name)).toEqual([VGA]);
  });

  it("a teardown on one agent leaves the other's volume group alone", async () => {
    const res = await request(a!.url, "POST", "/v1/teardown", {
      token: tokens.op,
      body: { spec: thickSpec(VGA, [A1, A2]) },
    });
    if (res.status !== 200) throw new Error(`teardown: HTTP ${res.status}: ${res.text}`);
    expect(vgs([A1, A2, B1, B2]).map((v) => v.vg_name)).toEqual([VGB]);
    expect(membersOf([B1, B2], VGB)).toEqual([B1, B2].sort());
  });

  it("no command of either agent named the other's devices", () => {
    for (const [file, foreign] of [
      ["node-iso-a-commands.jsonl", [B1, B2]],
      ["node-iso-b-commands.jsonl", [A1, A2]],
    ] as const) {
      const commands = commandLog(scratch.path(file));
      expect(commands.filter(isWrite).length).toBeGreaterThan(0);
      for (const c of commands)
        for (const d of foreign) expect(c.requested.join(" ").split(/[ ,]/)).not.toContain(d);
    }
  });
});
