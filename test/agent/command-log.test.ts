/**
 * The command log shows the command that was running at a crash (issue 11, smaller item): each
 * command gets a "start" line before it runs and an "end" line after. A test-only command prefix
 * makes vgcreate hang; the agent is killed with SIGKILL while it waits, and the log must name
 * vgcreate as started and not ended.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { agentTestbed } from "../support/agent/testbed";
import { commandLog, commandLogLines, request, thickSpec } from "./harness";
import { startedVia, writeHoldUpPrefix, writesVia } from "./command-prefix";

jest.setTimeout(120_000);

const marker = `sleep 36${randomBytes(2).readUInt16BE() % 90}.25`; // unique per run

const bed = agentTestbed("command-log", {
  end: "kill9",
  // The hung wrapper runs in its own process group and outlives the agent: end it by its pid.
  beforeCleanup: () => {
    try {
      for (const pid of execFileSync("pgrep", ["-f", marker], { encoding: "utf8" })
        .split("\n")
        .filter(Boolean))
        process.kill(Number(pid), "SIGKILL");
    } catch {
      /* none left */
    }
  },
});

it("after kill -9 during a command, the log names that command as started and not ended", async () => {
  const [L1] = [bed.scratch.loop()];
  const vg = `agt-clog-${randomBytes(3).toString("hex")}`;
  const wrapper = bed.scratch.path("hang-vgcreate.sh");
  writeHoldUpPrefix(wrapper, { tool: "vgcreate", before: marker, comment: "vgcreate hangs" });
  const { agent, token } = await bed.start({
    node: "node-clog",
    devices: [L1],
    extraArgs: ["--command-prefix", wrapper],
  });
  const log = bed.scratch.path("commands.jsonl");
  const spec = thickSpec(vg, [L1]);
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  expect(plan.status).toBe(200);
  const applying = request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  applying.catch(() => undefined); // the agent dies under it
  const deadline = Date.now() + 30_000;
  while (!commandLogLines(log).some((l) => l.tool === "vgcreate")) {
    if (Date.now() > deadline)
      throw new Error(`vgcreate never appeared in the command log:\n${fs.readFileSync(log, "utf8")}`);
    await new Promise((r) => setTimeout(r, 100));
  }
  await agent.kill9();

  const lines = commandLogLines(log);
  const vgcreate = lines.filter((l) => l.tool === "vgcreate");
  expect(vgcreate).toEqual([
    expect.objectContaining({ event: "start", requested: expect.arrayContaining(["vgcreate", vg, L1]) }),
  ]);
  expect(startedVia(log, "vgcreate")).toEqual([writesVia()]);
  // pvcreate before it ran to its end: a start and an end line; the ended commands are unchanged.
  expect(lines.filter((l) => l.tool === "pvcreate").map((l) => l.event)).toEqual(["start", "end"]);
  expect(commandLog(log).map((c) => c.tool)).toContain("pvcreate");
  expect(commandLog(log).map((c) => c.tool)).not.toContain("vgcreate");
});
