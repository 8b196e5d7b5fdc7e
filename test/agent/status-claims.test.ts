/**
 * Status compares the group with what the last apply approved (issue 11, item 6 remnant): a volume
 * group with fewer physical volumes than the approved plan claimed is not Healthy, even when the
 * plan now has nothing to do (the device left the group and is excluded now). Real agent, real
 * loop devices; the test takes a device out of the group by hand, as an operator (or a crash) might.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { agentTestbed } from "../support/agent/testbed";
import { lvm, membersOf, request, thickSpec } from "./harness";

jest.setTimeout(120_000);

const bed = agentTestbed("status-claims");

it("a volume group smaller than the approved plan claimed is Degraded, naming the device, not Ready", async () => {
  const [L1, L2] = [bed.scratch.loop(), bed.scratch.loop()];
  const vg = `agt-claim-${randomBytes(3).toString("hex")}`;
  const { agent, token } = await bed.start({ node: "node-claim", devices: [L1, L2] });
  const spec = thickSpec(vg, [L1, L2]);
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  const applied = await request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  expect(applied.status).toBe(200);
  const healthy = await request(agent.url, "GET", "/v1/status", { token });
  expect(healthy.json.status.state).toBe("Ready");

  // L2 leaves the group and gets a filesystem: the planner now excludes it, so nothing is "to do".
  lvm([L1, L2], ["vgreduce", vg, L2]);
  lvm([L1, L2], ["pvremove", L2]);
  execFileSync("mkfs.ext4", ["-q", "-F", L2]);
  expect(membersOf([L1, L2], vg)).toEqual([L1]);

  const res = await request(agent.url, "GET", "/v1/status", { token });
  expect(res.status).toBe(200);
  const status = res.json.status;
  expect(status.volumeGroups[0]).toMatchObject({ name: vg, state: "Degraded" });
  expect(status.volumeGroups[0].message).toContain(`claimed 2`);
  expect(status.volumeGroups[0].message).toContain(L2);
  expect(status.state).toBe("Degraded");
  expect(status.conditions.find((c: { type: string }) => c.type === "VolumeGroupsHealthy")).toMatchObject({
    status: "False",
  });
});
