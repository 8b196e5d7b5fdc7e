/**
 * Crash safety with real processes: the agent is killed with SIGKILL between steps (a test-only
 * hook pauses it after step N) and in the middle of a step (a command prefix that stalls vgcreate),
 * restarted on the same state directory, and sent the same apply again. It must converge, lose
 * nothing, and write to no device that was not in the plan the caller approved.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { readJournal } from "../../src/agent/journal";
import {
  commandLog,
  isWrite,
  lvm,
  membersOf,
  pvs,
  request,
  Scratch,
  thickSpec,
  vgs,
  type AgentProcess,
} from "./harness";
import { agentFleet } from "../support/agent/testbed";
import { startedVia, writeHoldUpPrefix, writesVia } from "./command-prefix";

jest.setTimeout(180_000);

const PAUSE_ENV = "PULUMI_LVM_AGENT_TEST_PAUSE_AFTER_STEP";
const fleet = agentFleet("crash", { end: "kill9" });
let scratch: Scratch;
let token: string;
beforeAll(() => ({ scratch, token } = fleet));

const { options, start } = fleet;

async function plan(agent: AgentProcess, spec: unknown) {
  const res = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  expect(res.status).toBe(200);
  return res.json;
}

/** Sends an apply that will never get its answer (the agent dies); resolves when the agent is dead. */
async function applyAndKill(
  agent: AgentProcess,
  spec: unknown,
  hash: string,
  whenToKill: () => Promise<void>,
) {
  const pending = request(agent.url, "POST", "/v1/apply", { token, body: { spec, planHash: hash } }).then(
    (r) => r,
    (e: Error) => e,
  );
  await whenToKill();
  await agent.kill9();
  const outcome = await pending;
  expect(outcome).toMatchObject({ code: "ECONNRESET" }); // the connection died with the agent: no answer
}

/** Every process below `pid` (the commands an agent is running), by pid. */
function descendants(pid: number): number[] {
  let children: number[] = [];
  try {
    children = execFileSync("pgrep", ["-P", String(pid)], { encoding: "utf8" })
      .trim()
      .split("\n")
      .filter(Boolean)
      .map(Number);
  } catch {
    return [];
  }
  return children.flatMap((c) => [c, ...descendants(c)]);
}

function writesOutside(file: string, approved: readonly string[]): string[] {
  return commandLog(file)
    .filter(isWrite)
    .flatMap((c) => c.requested.filter((w) => w.startsWith("/dev/") && !approved.includes(w)));
}

describe("kill -9 between steps", () => {
  it("resumes the interrupted apply when the same request is sent again, and converges", async () => {
    const [L1, L2, L3] = [scratch.loop(), scratch.loop(), scratch.loop()];
    const vg = `agt-crash-${randomBytes(3).toString("hex")}`;
    const spec = thickSpec(vg, [L1, L2]);
    const first = await start(options("node-crash-1", [L1, L2, L3], { env: { [PAUSE_ENV]: "1" } }));
    const approved = await plan(first, spec);
    expect(approved.actions[0]).toMatchObject({ op: "pvcreate", device: L1 });

    await applyAndKill(first, spec, approved.hash, async () => {
      await first.waitForLog((e) => e.msg === "test hook: paused");
    });
    // Killed after step 1: L1 is a PV in no group, L2 untouched.
    expect(pvs([L1, L2, L3])).toEqual([expect.objectContaining({ pv_name: L1, vg_name: "" })]);

    const second = await start(options("node-crash-1", [L1, L2, L3]));
    await second.waitForLog(
      (e) => e.msg === "the last operation was interrupted; the same request resumes it",
    );
    const status = await request(second.url, "GET", "/v1/status", { token });
    expect(status.json.lastOperation).toMatchObject({ result: "interrupted", stepsDone: 1 });

    const resumed = await request(second.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: approved.hash },
    });
    if (resumed.status !== 200) throw new Error(`resume: HTTP ${resumed.status}: ${resumed.text}`);
    expect(resumed.json.resumed).toBeDefined();
    expect(resumed.json.steps.map((s: { op: string }) => s.op)).not.toContain("wipefs");
    expect(membersOf([L1, L2, L3], vg)).toEqual([L1, L2].sort());
    expect(vgs([L1, L2, L3])).toEqual([expect.objectContaining({ vg_name: vg, pv_count: "2" })]);
    expect(pvs([L3])).toEqual([]);

    const writes = commandLog(scratch.path("node-crash-1-commands.jsonl")).filter(isWrite);
    expect(writes.filter((c) => c.tool === "pvcreate").map((c) => c.requested.at(-1))).toEqual([L1, L2]); // L1 once
    expect(writesOutside(scratch.path("node-crash-1-commands.jsonl"), [L1, L2])).toEqual([]);
    const ops = readJournal(scratch.path("node-crash-1-state/journal.jsonl")).records.filter(
      (r) => r.type === "operation-finish",
    );
    expect(ops.map((r) => (r as { result: string }).result)).toEqual(["superseded", "succeeded"]);

    const again = await plan(second, spec);
    expect(again.actions).toEqual([]);
  });

  it("refuses to resume when the plan now writes to a device the approved plan did not include", async () => {
    const [L1, L2, L3] = [scratch.loop(), scratch.loop(), scratch.loop()];
    execFileSync("mkswap", [L3], { stdio: "ignore" }); // L3 carries a signature: excluded from the approved plan
    const vg = `agt-crash-${randomBytes(3).toString("hex")}`;
    const spec = thickSpec(vg, [L1, L2, L3]);
    const first = await start(options("node-crash-2", [L1, L2, L3], { env: { [PAUSE_ENV]: "1" } }));
    const approved = await plan(first, spec);
    expect(JSON.stringify(approved.volumeGroups[0].excluded)).toContain(L3);
    await applyAndKill(first, spec, approved.hash, async () => {
      await first.waitForLog((e) => e.msg === "test hook: paused");
    });

    execFileSync("wipefs", ["--all", L3], { stdio: "ignore" }); // while the agent is down, L3 becomes usable
    const second = await start(options("node-crash-2", [L1, L2, L3]));
    const refused = await request(second.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: approved.hash },
    });
    expect(refused.status).toBe(409);
    expect(refused.json.error.code).toBe("PlanChanged");
    expect(refused.json.error.unapprovedDevices).toEqual([L3]);
    expect(pvs([L3])).toEqual([]);
    expect(writesOutside(scratch.path("node-crash-2-commands.jsonl"), [L1, L2])).toEqual([]);

    // The caller reviews the fresh plan (now with L3) and approves it by its hash.
    const fresh = refused.json.error.plan;
    const applied = await request(second.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: fresh.hash },
    });
    if (applied.status !== 200) throw new Error(`apply: HTTP ${applied.status}: ${applied.text}`);
    expect(membersOf([L1, L2, L3], vg)).toEqual([L1, L2, L3].sort());
  });
});

describe("kill -9 between steps, then a teardown instead (the node deselected meanwhile)", () => {
  it("removes the LVM label the interrupted apply wrote, and no other", async () => {
    const [L1, L2, L3] = [scratch.loop(), scratch.loop(), scratch.loop()];
    lvm([L3], ["pvcreate", L3]); // an orphan PV the agent did not create: it stays
    const vg = `agt-crash-${randomBytes(3).toString("hex")}`;
    const spec = thickSpec(vg, [L1, L2]);
    const first = await start(options("node-crash-4", [L1, L2, L3], { env: { [PAUSE_ENV]: "1" } }));
    const approved = await plan(first, spec);
    expect(approved.actions[0]).toMatchObject({ op: "pvcreate", device: L1 });
    await applyAndKill(first, spec, approved.hash, async () => {
      await first.waitForLog((e) => e.msg === "test hook: paused");
    });
    expect(pvs([L1, L2])).toEqual([expect.objectContaining({ pv_name: L1, vg_name: "" })]);

    const second = await start(options("node-crash-4", [L1, L2, L3]));
    const torn = await request(second.url, "POST", "/v1/teardown", { token, body: { spec } });
    if (torn.status !== 200) throw new Error(`teardown: HTTP ${torn.status}: ${torn.text}`);
    const left = pvs([L1, L2, L3]).map((p) => `${p.pv_name} ${p.vg_name || "(no group)"}`);
    console.log(`PVs after the teardown: ${left.join(", ")}`);
    expect(left).toEqual([`${L3} (no group)`]);
    expect(writesOutside(scratch.path("node-crash-4-commands.jsonl"), [L1, L2])).toEqual([]);
  });
});

describe("kill -9 in the middle of a step", () => {
  it("dies while vgcreate is about to run; after a restart the same request finishes the job", async () => {
    const [L1, L2] = [scratch.loop(), scratch.loop()];
    const vg = `agt-crash-${randomBytes(3).toString("hex")}`;
    const spec = thickSpec(vg, [L1, L2]);
    const flag = scratch.path("slow-vgcreate");
    const started = scratch.path("vgcreate-started");
    const wrapper = scratch.path("slow.sh");
    writeHoldUpPrefix(wrapper, {
      tool: "vgcreate",
      before: `if [ -e ${flag} ]; then : > ${started}; sleep 30; fi`,
      comment: `stalls vgcreate while ${flag} exists`,
    });
    fs.writeFileSync(flag, "");
    const first = await start(
      options("node-crash-3", [L1, L2], { extraArgs: ["--command-prefix", wrapper] }),
    );
    const approved = await plan(first, spec);
    let running: number[] = [];
    await applyAndKill(first, spec, approved.hash, async () => {
      for (let i = 0; i < 200 && !fs.existsSync(started); i++) await new Promise((r) => setTimeout(r, 50));
      expect(fs.existsSync(started)).toBe(true);
      running = descendants(first.pid);
      expect(running.length).toBeGreaterThan(0);
    });
    // The whole node goes down: the agent first (it must not see its command fail), then that command.
    for (const pid of running) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        /* gone with the agent: its state-dir lock holder (flock) exits when the agent's pipe closes */
      }
    }
    fs.rmSync(flag);
    expect(vgs([L1, L2])).toEqual([]);
    expect(
      pvs([L1, L2])
        .map((p) => p.pv_name)
        .sort(),
    ).toEqual([L1, L2].sort());

    const journal = readJournal(scratch.path("node-crash-3-state/journal.jsonl")).records;
    expect(journal.at(-1)).toMatchObject({ type: "action-start", action: "vgcreate" });
    expect(startedVia(scratch.path("node-crash-3-commands.jsonl"), "vgcreate")).toEqual([writesVia()]);

    const second = await start(
      options("node-crash-3", [L1, L2], { extraArgs: ["--command-prefix", wrapper] }),
    );
    const resumed = await request(second.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: approved.hash },
    });
    if (resumed.status !== 200) throw new Error(`resume: HTTP ${resumed.status}: ${resumed.text}`);
    expect(resumed.json.steps.map((s: { op: string }) => s.op)).toEqual([
      "vgcreate",
      "pvchange",
      "pvchange",
      "write-lvmd-config",
    ]);
    expect(membersOf([L1, L2], vg)).toEqual([L1, L2].sort());
    expect(writesOutside(scratch.path("node-crash-3-commands.jsonl"), [L1, L2])).toEqual([]);
  });
});
