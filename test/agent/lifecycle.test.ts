/**
 * The agent process on real loop devices with real lvm2 (host tier: metadata only, so Thick device
 * classes): create a volume group, extend it with a new device, remove an empty PV, tear down.
 * Every result is checked with pvs/vgs run by the test itself, not by the agent.
 */
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import YAML from "yaml";
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
import { agentTestbed } from "../support/agent/testbed";

jest.setTimeout(120_000);

const bed = agentTestbed("lifecycle");
let scratch: Scratch;
let agent: AgentProcess | undefined;
let token: string;
let L1: string, L2: string, L3: string;
const VG = `agt-life-${randomBytes(3).toString("hex")}`;

beforeAll(async () => {
  scratch = bed.scratch;
  [L1, L2, L3] = [scratch.loop(), scratch.loop(), scratch.loop()];
  ({ agent, token } = await bed.start({ node: "node-life", devices: [L1, L2, L3] }));
});

const all = () => [L1, L2, L3];

const apply = (spec: unknown) => planAndApply(agent!.url, token, spec);

describe("an agent on loop devices", () => {
  it("plans without writing anything", async () => {
    const spec = thickSpec(VG, [L1, L2]);
    const before = commandLog(scratch.path("commands.jsonl")).length;
    const plan = await request(agent!.url, "POST", "/v1/plan", { token, body: { spec } });
    expect(plan.status).toBe(200);
    expect(plan.json.actions.map((a: { op: string }) => a.op)).toEqual([
      "pvcreate",
      "pvcreate",
      "vgcreate",
      "pvchange",
      "pvchange",
      "write-lvmd-config",
    ]);
    const ran = commandLog(scratch.path("commands.jsonl")).slice(before);
    expect(ran.length).toBeGreaterThan(0);
    expect(ran.filter(isWrite)).toEqual([]);
    expect(pvs(all())).toEqual([]);
    expect(fs.existsSync(scratch.path("lvmd.yaml"))).toBe(false);
  });

  it("creates a volume group (Thick device class) and writes lvmd.yaml", async () => {
    const { result } = await apply(thickSpec(VG, [L1, L2]));
    expect(result.steps.every((s: { outcome: string }) => s.outcome === "done")).toBe(true);
    const [vg] = vgs(all());
    expect(vg).toMatchObject({ vg_name: VG, pv_count: "2", vg_tags: "pulumi-lvm" });
    expect(membersOf(all(), VG)).toEqual([L1, L2].sort());
    expect(pvs(all()).find((p) => p.pv_name === L1)?.pv_tags).toContain("pulumi-lvm.kname=");
    const lvmd = YAML.parse(fs.readFileSync(scratch.path("lvmd.yaml"), "utf8"));
    expect(lvmd["device-classes"]).toEqual([
      { name: `${VG}-thick`, "volume-group": VG, default: true, type: "thick", "spare-gb": 0 },
    ]);
  });

  it("is idempotent: the same spec again plans nothing and writes nothing", async () => {
    const before = commandLog(scratch.path("commands.jsonl")).length;
    const { plan, result } = await apply(thickSpec(VG, [L1, L2]));
    expect(plan.actions).toEqual([]);
    expect(result.steps).toEqual([]);
    expect(commandLog(scratch.path("commands.jsonl")).slice(before).filter(isWrite)).toEqual([]);
  });

  it("reports the volume group in status and metrics", async () => {
    const status = await request(agent!.url, "GET", "/v1/status", { token });
    expect(status.json.status.volumeGroups[0]).toMatchObject({ name: VG, state: "Healthy" });
    expect(
      status.json.status.volumeGroups[0].devices.included.map((d: { kname: string }) => d.kname).sort(),
    ).toEqual([L1, L2].sort());
    expect(status.json.status.deviceClasses).toEqual([
      { name: `${VG}-thick`, volumeGroup: VG, state: "Healthy" },
    ]);
    const metrics = await request(agent!.url, "GET", "/metrics");
    expect(metrics.text).toMatch(new RegExp(`pulumi_lvm_agent_volume_group_size_bytes\\{vg="${VG}"\\} \\d+`));
    expect(metrics.text).toMatch(/pulumi_lvm_agent_commands_total\{tool="vgcreate",result="ok"\} 1/);
    // the agent process's registry has prom-client's process and Node.js runtime metrics
    expect(metrics.text).toMatch(/^process_resident_memory_bytes \d+/m);
    expect(metrics.text).toMatch(/^nodejs_heap_size_used_bytes \d+/m);
  });

  it("extends the volume group with a new loop device", async () => {
    const { plan } = await apply(thickSpec(VG, [L1, L2, L3]));
    expect(plan.actions.map((a: { op: string }) => a.op)).toEqual(["pvcreate", "vgextend", "pvchange"]);
    expect(membersOf(all(), VG)).toEqual([L1, L2, L3].sort());
    expect(vgs(all())[0]!.pv_count).toBe("3");
  });

  it("removes an empty PV the selector no longer picks", async () => {
    const { plan } = await apply(thickSpec(VG, [L1, L2]));
    expect(
      plan.actions.map((a: { op: string; device?: string }) => `${a.op} ${a.device ?? ""}`.trim()),
    ).toEqual([`vgreduce ${L3}`, `pvremove ${L3}`]);
    expect(membersOf(all(), VG)).toEqual([L1, L2].sort());
    expect(pvs(all()).map((p) => p.pv_name)).not.toContain(L3);
  });

  it("tears the volume group down: vgremove, pvremove, lvmd.yaml without its class", async () => {
    const res = await request(agent!.url, "POST", "/v1/teardown", {
      token,
      body: { spec: thickSpec(VG, [L1, L2]), volumeGroup: VG },
    });
    if (res.status !== 200) throw new Error(`teardown: HTTP ${res.status}: ${res.text}`);
    expect(vgs(all())).toEqual([]);
    expect(pvs(all())).toEqual([]);
    expect(YAML.parse(fs.readFileSync(scratch.path("lvmd.yaml"), "utf8"))["device-classes"]).toEqual([]);
    const status = await request(agent!.url, "GET", "/v1/status", { token });
    expect(status.json.lastOperation).toMatchObject({ kind: "teardown", result: "succeeded" });
    expect(status.json.status.volumeGroups[0]).toMatchObject({ name: VG, state: "Missing" });
  });

  it("wrote only to its own devices, through argv arrays, with the filter", () => {
    const writes = commandLog(scratch.path("commands.jsonl")).filter(isWrite);
    expect(writes.length).toBeGreaterThan(0);
    for (const w of writes)
      for (const word of w.requested.filter((x) => x.startsWith("/dev/"))) expect(all()).toContain(word);
  });
});
