/**
 * One missing disk must not blind the agent (issue 11, item 10). The agent builds a volume group on
 * two real loop devices, then the test detaches one (`losetup -d`): inventory, plan, status and
 * metrics keep answering for what exists, name the missing physical volume (lvm's `[unknown]` with
 * its PV UUID) and the device that is gone, and the plan changes nothing in the group (no
 * `vgreduce --removemissing`) until the group's missingDevicePolicy asks for the repair; the repaired
 * group is whole, and the disk that comes back afterwards is left alone (docs/disk-failure.md).
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { agentTestbed } from "../support/agent/testbed";
import { commandLog, isWrite, lvm, pvs, request, thickSpec, type AgentProcess } from "./harness";

jest.setTimeout(120_000);

const bed = agentTestbed("missing-device", {
  // Back again (under whatever loop number is free), so cleanup removes the group whole.
  beforeCleanup: () => {
    if (!L2File || L2Back) return;
    const again = execFileSync("losetup", ["--find", "--show", L2File], { encoding: "utf8" }).trim();
    bed.scratch.loops.push(again);
  },
});
let agent: AgentProcess | undefined;
let token: string;
let L1: string, L2: string;
let L2File: string;
let L2Uuid: string;
/** L2 attached again by the last test (under this loop device). */
let L2Back: string | undefined;
const VG = `agt-miss-${randomBytes(3).toString("hex")}`;
const spec = () => thickSpec(VG, [L1, L2]);

beforeAll(async () => {
  [L1, L2] = [bed.scratch.loop(), bed.scratch.loop()];
  L2File = execFileSync("losetup", ["--noheadings", "--output", "BACK-FILE", L2], {
    encoding: "utf8",
  }).trim();
  ({ agent, token } = await bed.start({ node: "node-miss", devices: [L1, L2] }));
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec: spec() } });
  expect(plan.status).toBe(200);
  const applied = await request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec: spec(), planHash: plan.json.hash },
  });
  if (applied.status !== 200) throw new Error(`apply: HTTP ${applied.status}: ${applied.text}`);
  L2Uuid = pvs([L1, L2]).find((p) => p.pv_name === L2)!.pv_uuid;
  execFileSync("losetup", ["--detach", L2]);
});

it("inventory answers: the missing physical volume by its UUID, the missing device by name", async () => {
  const inv = await request(agent!.url, "GET", "/v1/inventory", { token });
  expect({ status: inv.status, text: inv.status === 200 ? "" : inv.text }).toEqual({ status: 200, text: "" });
  expect(inv.json.missingDevices).toEqual([L2]);
  expect(inv.json.devices.map((d: { kname: string }) => d.kname)).toEqual([L1]);
  expect(inv.json.vgs.map((v: { name: string }) => v.name)).toEqual([VG]);
  expect(inv.json.pvs).toEqual(
    expect.arrayContaining([
      expect.objectContaining({ device: "[unknown]", uuid: L2Uuid, vgName: VG, missing: true }),
      expect.objectContaining({ device: L1, vgName: VG }),
    ]),
  );
});

it("plan changes nothing in the group and says why, naming the volume group and the PV", async () => {
  const before = commandLog(bed.scratch.path("commands.jsonl")).length;
  const plan = await request(agent!.url, "POST", "/v1/plan", { token, body: { spec: spec() } });
  expect({ status: plan.status, text: plan.status === 200 ? "" : plan.text }).toEqual({
    status: 200,
    text: "",
  });
  expect(plan.json.actions.filter((a: { op: string }) => a.op !== "write-lvmd-config")).toEqual([]);
  expect(JSON.stringify(plan.json.actions)).not.toContain("removemissing");
  expect(plan.json.blocked).toEqual([
    expect.objectContaining({ volumeGroup: VG, reason: expect.stringContaining(L2Uuid) }),
  ]);
  expect(commandLog(bed.scratch.path("commands.jsonl")).slice(before).filter(isWrite)).toEqual([]);
  // lvm itself still sees the group with one PV missing: nothing was reduced.
  expect(lvm([L1], ["vgs", "--noheadings", "-o", "pv_count,vg_missing_pv_count", VG], true).trim()).toMatch(
    /^2\s+1$/,
  );
});

it("status is Degraded, with a condition naming the volume group, the missing PV and the device", async () => {
  const res = await request(agent!.url, "GET", "/v1/status", { token });
  expect({ status: res.status, text: res.status === 200 ? "" : res.text }).toEqual({ status: 200, text: "" });
  const status = res.json.status;
  expect(status.state).toBe("Degraded");
  expect(status.volumeGroups[0]).toMatchObject({ name: VG, state: "Degraded" });
  expect(status.volumeGroups[0].message).toContain(L2Uuid);
  const vgCondition = status.conditions.find((c: { type: string }) => c.type === "VolumeGroupsHealthy");
  expect(vgCondition).toMatchObject({ status: "False" });
  expect(vgCondition.message).toContain(VG);
  expect(vgCondition.message).toContain(L2Uuid);
  expect(vgCondition.message).toContain(L2);
});

it("metrics keep the volume group and count its missing physical volume", async () => {
  const metrics = await request(agent!.url, "GET", "/metrics");
  expect(metrics.status).toBe(200);
  expect(metrics.text).toMatch(new RegExp(`pulumi_lvm_agent_volume_group_size_bytes\\{vg="${VG}"\\} \\d+`));
  expect(metrics.text).toContain(`pulumi_lvm_agent_volume_group_missing_physical_volumes{vg="${VG}"} 1`);
  expect(metrics.text).toContain(`pulumi_lvm_agent_missing_devices 1`);
});

it("with missingDevicePolicy RemoveFromGroup the plan repairs the group; applied by its hash, the group is whole", async () => {
  const repairSpec = () => {
    const s = spec();
    return { ...s, volumeGroups: [{ ...s.volumeGroups[0]!, missingDevicePolicy: "RemoveFromGroup" }] };
  };
  const plan = await request(agent!.url, "POST", "/v1/plan", { token, body: { spec: repairSpec() } });
  expect(plan.status).toBe(200);
  expect(plan.json.blocked).toEqual([]);
  expect(plan.json.actions[0]).toMatchObject({
    op: "vgreduce-removemissing",
    argv: ["vgreduce", "--removemissing", VG],
    missingPvs: [`pv:${L2Uuid}`],
  });
  const applied = await request(agent!.url, "POST", "/v1/apply", {
    token,
    body: { spec: repairSpec(), planHash: plan.json.hash },
  });
  expect({ status: applied.status, text: applied.status === 200 ? "" : applied.text }).toEqual({
    status: 200,
    text: "",
  });
  expect(lvm([L1], ["vgs", "--noheadings", "-o", "pv_count,vg_missing_pv_count", VG], true).trim()).toMatch(
    /^1\s+0$/,
  );
  const status = await request(agent!.url, "GET", "/v1/status", { token });
  expect(status.json.status.volumeGroups[0]).toMatchObject({ name: VG, state: "Healthy" });

  // The disk comes back: it still carries the group's old metadata. No plan writes it; lvm's own
  // remedy (vgck --updatemetadata) leaves it a physical volume of no group.
  L2Back = execFileSync("losetup", ["--find", "--show", L2File], { encoding: "utf8" }).trim();
  bed.scratch.loops.push(L2Back);
  const again = await request(agent!.url, "POST", "/v1/plan", { token, body: { spec: repairSpec() } });
  expect(again.status).toBe(200);
  expect(JSON.stringify(again.json.actions)).not.toContain(L2Back);
  expect(JSON.stringify(again.json.actions)).not.toContain("removemissing");
  lvm([L1, L2Back], ["vgck", "--updatemetadata", VG]);
  expect(lvm([L1, L2Back], ["pvs", "--noheadings", "-o", "pv_name,vg_name", L2Back]).trim()).toBe(L2Back);
});
