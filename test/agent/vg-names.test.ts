/**
 * Two tenants on one machine (issue 11, item 9): an agent confined by --devices must not create a
 * volume group whose name exists on devices outside its list — afterwards any lvm that sees both
 * would refuse both. Real agent, real loop devices, the other tenant's group made by the test. The
 * names are read one-shot, and (with the lvm shell) in the agent's names shell (issue 18), which
 * must see the other tenant's devices although the agent's own shell sees only its own.
 */
import { randomBytes } from "node:crypto";
import { agentTestbed } from "../support/agent/testbed";
import { commandLogLines, lvm, planAndApply, pvs, request, thickSpec, vgs } from "./harness";

jest.setTimeout(120_000);

const NAMES_READ = ["vgs", "--reportformat", "json", "-o", "vg_name"];

describe.each([
  // The shell off explicitly (PULUMI_LVM_TEST_LVM_SHELL would otherwise give this agent one).
  { how: "one-shot", extraArgs: ["--lvm-sync-io", "--no-lvm-shell"], via: undefined },
  { how: "in the names shell", extraArgs: ["--lvm-sync-io", "--lvm-shell-writes"], via: "shell" },
])("the names read $how", ({ how, extraArgs, via }) => {
  const bed = agentTestbed(`vg-names-${how === "one-shot" ? "oneshot" : "shell"}`);

  it("refuses (409) a volume group name another tenant's devices already use, writing nothing; a free name is created", async () => {
    const [mine, theirs, more] = [bed.scratch.loop(), bed.scratch.loop(), bed.scratch.loop()];
    const name = `agt-hostile-${randomBytes(3).toString("hex")}`;
    lvm([theirs], ["vgcreate", name, theirs]); // the other tenant's group, outside this agent's --devices
    const { agent, token } = await bed.start({ node: "node-a", devices: [mine, more], extraArgs });
    // A report first: with the shell, the agent's own shell now holds --devices (lvm keeps it).
    expect((await request(agent.url, "GET", "/v1/inventory", { token })).status).toBe(200);
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

    // A free name: read the same way, then created.
    const free = `agt-free-${randomBytes(3).toString("hex")}`;
    const freeSpec = thickSpec(free, [more]);
    await planAndApply(agent.url, token, freeSpec);
    expect(vgs([more])).toEqual([expect.objectContaining({ vg_name: free, pv_count: "1" })]);

    const reads = commandLogLines(bed.scratch.agentFiles().commandLog).filter(
      (l) => l.event === "end" && JSON.stringify(l.requested) === JSON.stringify(NAMES_READ),
    );
    expect(reads.map((l) => [(l as { via?: string }).via, l.exitCode])).toEqual([
      [via, 0],
      [via, 0],
    ]);
  });
});
