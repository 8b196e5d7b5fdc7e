/**
 * Two tenants on one machine (issue 11, item 9): an agent confined by --devices must not create a
 * volume group whose name exists on devices outside its list — afterwards any lvm that sees both
 * would refuse both. Real agent, real loop devices, the other tenant's group made by the test.
 */
import { randomBytes } from "node:crypto";
import { agentTestbed } from "../support/agent/testbed";
import { lvm, pvs, request, thickSpec, vgs } from "./harness";

jest.setTimeout(120_000);

const bed = agentTestbed("vg-names");

it("refuses (409) a volume group name another tenant's devices already use, writing nothing", async () => {
  const [mine, theirs] = [bed.scratch.loop(), bed.scratch.loop()];
  const name = `agt-hostile-${randomBytes(3).toString("hex")}`;
  lvm([theirs], ["vgcreate", name, theirs]); // the other tenant's group, outside this agent's --devices
  const { agent, token } = await bed.start({ node: "node-a", devices: [mine] });
  const spec = thickSpec(name, [mine]);
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  expect(plan.status).toBe(200);
  const applied = await request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  expect({ status: applied.status, code: applied.json?.error?.code }).toEqual({
    status: 409,
    code: "VolumeGroupNameTaken",
  });
  expect(pvs([mine])).toEqual([]);
  expect(vgs([mine, theirs])).toEqual([expect.objectContaining({ vg_name: name, pv_count: "1" })]);
});
