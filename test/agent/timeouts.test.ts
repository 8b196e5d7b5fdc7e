/**
 * Command timeouts and shutdown with real processes (issue 11, item 7). A test-only command prefix
 * makes vgcreate leave a grandchild holding the command's output pipes, as `nsenter -p` (which forks)
 * or a wrapper does: the timeout must kill the whole process group without waiting for those pipes,
 * a command that did its work before the timeout is re-checked (not assumed failed), and on SIGTERM
 * nothing is journaled after the lock is released: the operation stays interrupted and resumable.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { readJournal } from "../../src/agent/journal";
import { membersOf, request, Scratch, thickSpec, vgs } from "./harness";
import { agentFleet } from "../support/agent/testbed";
import { startedVia, writeHoldUpPrefix, writesVia } from "./command-prefix";

jest.setTimeout(180_000);

const fleet = agentFleet("timeouts", { end: "kill9" });
let scratch: Scratch;
let token: string;
beforeAll(() => ({ scratch, token } = fleet));

const { options, start } = fleet;

/** Processes whose command line contains `marker` (the stalled commands of one test). */
function survivors(marker: string): string[] {
  try {
    return execFileSync("pgrep", ["-af", marker], { encoding: "utf8" }).trim().split("\n").filter(Boolean);
  } catch {
    return [];
  }
}

it("a timed-out command is killed with everything it started; its outcome is re-checked, not assumed", async () => {
  const [L1, L2] = [scratch.loop(), scratch.loop()];
  const vg = `agt-tmo-${randomBytes(3).toString("hex")}`;
  const spec = thickSpec(vg, [L1, L2]);
  const marker = `sleep 2${randomBytes(2).readUInt16BE() % 9}.5`; // unique per run
  const wrapper = scratch.path("after-vgcreate.sh");
  writeHoldUpPrefix(wrapper, {
    tool: "vgcreate",
    after: `sh -c "${marker}" & ${marker}`,
    comment: "vgcreate runs, then a grandchild keeps the output pipes open and the wrapper hangs",
  });
  const agent = await start(
    options("node-tmo-1", [L1, L2], { extraArgs: ["--command-prefix", wrapper, "--command-timeout", "3s"] }),
  );
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  const t0 = Date.now();
  const applied = await request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  const seconds = (Date.now() - t0) / 1000;
  expect({ status: applied.status, fastEnough: seconds < 12 }).toEqual({ status: 200, fastEnough: true });
  const step = applied.json.steps.find((s: { op: string }) => s.op === "vgcreate");
  expect(step.reason).toMatch(/timed out.*re-checked/);
  expect(startedVia(scratch.agentFiles("node-tmo-1").commandLog, "vgcreate")).toEqual([writesVia()]);
  expect(membersOf([L1, L2], vg)).toEqual([L1, L2].sort());
  expect(survivors(marker)).toEqual([]);
});

it("SIGTERM past the grace kills the running command, journals nothing after the lock is released, and the apply resumes", async () => {
  const [L1, L2] = [scratch.loop(), scratch.loop()];
  const vg = `agt-tmo-${randomBytes(3).toString("hex")}`;
  const spec = thickSpec(vg, [L1, L2]);
  const flag = scratch.path("stall");
  const started = scratch.path("stall-started");
  const marker = `sleep 3${randomBytes(2).readUInt16BE() % 9}.5`;
  const wrapper = scratch.path("stall-vgcreate.sh");
  writeHoldUpPrefix(wrapper, {
    tool: "vgcreate",
    before: `if [ -e ${flag} ]; then : > ${started}; sh -c "${marker}"; fi`,
    comment: "vgcreate stalls (in a grandchild) while the flag exists",
  });
  fs.writeFileSync(flag, "");
  const o = options("node-tmo-2", [L1, L2], {
    extraArgs: ["--command-prefix", wrapper, "--shutdown-grace", "2s"],
  });
  const agent = await start(o);
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  const pending = request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  }).then(
    (r) => r,
    (e: Error) => e,
  );
  for (let i = 0; i < 200 && !fs.existsSync(started); i++) await new Promise((r) => setTimeout(r, 50));
  expect(fs.existsSync(started)).toBe(true);
  const t0 = Date.now();
  const journalFile = `${o.stateDir}/journal.jsonl`;
  await agent.stop();
  const seconds = (Date.now() - t0) / 1000;
  await pending;
  const atExit = fs.readFileSync(journalFile, "utf8");
  expect(fs.readFileSync(`${o.stateDir}/agent.pid`, "utf8")).toBe(""); // released
  expect(survivors(marker)).toEqual([]);
  await new Promise((r) => setTimeout(r, 3000)); // nothing is written after the agent is gone
  expect(fs.readFileSync(journalFile, "utf8")).toBe(atExit);
  const records = readJournal(journalFile).records;
  expect(records.at(-1)).toMatchObject({ type: "action-start", action: "vgcreate" });
  expect(records.filter((r) => r.type === "action-error" || r.type === "operation-finish")).toEqual([]);
  expect(seconds).toBeLessThan(12);
  expect(vgs([L1, L2])).toEqual([]);

  fs.rmSync(flag);
  const second = await start(options("node-tmo-2", [L1, L2]));
  const resumed = await request(second.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  if (resumed.status !== 200) throw new Error(`resume: HTTP ${resumed.status}: ${resumed.text}`);
  expect(resumed.json.resumed).toBeDefined();
  expect(membersOf([L1, L2], vg)).toEqual([L1, L2].sort());
});
