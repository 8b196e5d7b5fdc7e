/**
 * Resuming after kill -9 in the window between a pvcreate and its journal record (issue 11, items 2
 * and 6), with real agent processes on loop devices. A test-only command prefix runs pvcreate on one
 * device and then stalls, so the agent is killed after the PV exists but before it journaled it.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import { commandLog, isWrite, membersOf, pvs, request, Scratch, thickSpec, vgs } from "./harness";
import { agentFleet } from "../support/agent/testbed";
import { startedVia, writeHoldUpPrefix, writesVia } from "./command-prefix";

jest.setTimeout(180_000);

const fleet = agentFleet("resume-safety", { end: "kill9" });
let scratch: Scratch;
let token: string;
beforeAll(() => ({ scratch, token } = fleet));

const { options, start } = fleet;

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

/**
 * Starts an agent whose pvcreate of `device` runs and then stalls; applies `spec`, and kills the
 * agent (and the stalled command) with SIGKILL once that pvcreate has finished. Returns the approved hash.
 */
async function killAfterPvcreate(node: string, devices: string[], device: string, spec: unknown) {
  const flag = scratch.path(`${node}-stall`);
  const done = scratch.path(`${node}-pvcreate-done`);
  const wrapper = scratch.path(`${node}-wrapper.sh`);
  writeHoldUpPrefix(wrapper, {
    tool: "pvcreate",
    lastArg: device,
    after: `if [ -e ${flag} ]; then : > ${done}; sleep 60; exit 0; fi`,
    comment: `runs pvcreate of ${device}, then stalls while ${flag} exists`,
  });
  fs.writeFileSync(flag, "");
  const first = await start(options(node, devices, { extraArgs: ["--command-prefix", wrapper] }));
  const plan = await request(first.url, "POST", "/v1/plan", { token, body: { spec } });
  expect(plan.status).toBe(200);
  const pending = request(first.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  }).then(
    (r) => r,
    (e: Error) => e,
  );
  for (let i = 0; i < 400 && !fs.existsSync(done); i++) await new Promise((r) => setTimeout(r, 50));
  expect(fs.existsSync(done)).toBe(true);
  expect(startedVia(scratch.agentFiles(node).commandLog, "pvcreate").at(-1)).toBe(writesVia());
  const running = descendants(first.pid);
  await first.kill9();
  for (const pid of running) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      /* gone */
    }
  }
  fs.rmSync(flag);
  expect(await pending).toMatchObject({ code: "ECONNRESET" });
  // The PV exists, the journal has the pvcreate's start and no record of its end.
  expect(pvs(devices).map((p) => p.pv_name)).toContain(device);
  return plan.json;
}

function blkid(device: string, tag: string): string {
  try {
    return execFileSync("blkid", ["-p", "-o", "value", "-s", tag, device], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

describe("kill -9 between pvcreate and its journal record", () => {
  it("refuses (409) to resume when the fresh plan would wipe a device the approved plan did not wipe", async () => {
    const [B, E] = [scratch.loop(), scratch.loop()];
    execFileSync("mkfs.ext4", ["-q", "-F", "-L", "old", E], { stdio: "ignore" });
    const vg = `agt-resume-${randomBytes(3).toString("hex")}`;
    const base = thickSpec(vg, [B, E]);
    const spec = {
      ...base,
      volumeGroups: [{ ...base.volumeGroups[0]!, forceWipeDevicesAndDestroyAllData: true }],
    };
    const approved = await killAfterPvcreate("node-resume-wipe", [B, E], B, spec);
    expect(
      approved.actions
        .filter((a: { op: string }) => a.op === "wipefs")
        .map((a: { device: string }) => a.device),
    ).toEqual([E]);

    // While the agent is down, someone makes a filesystem on B and writes to it.
    execFileSync("mkfs.ext4", ["-q", "-F", "-L", "new-data", B], { stdio: "ignore" });
    const uuid = blkid(B, "UUID");
    expect(uuid).not.toBe("");

    const second = await start(options("node-resume-wipe", [B, E]));
    const resumed = await request(second.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: approved.hash },
    });
    expect({ status: resumed.status, code: resumed.json?.error?.code }).toEqual({
      status: 409,
      code: "PlanChanged",
    });
    expect(blkid(B, "UUID")).toBe(uuid);
    expect(blkid(B, "LABEL")).toBe("new-data");
    const wipes = commandLog(scratch.path("node-resume-wipe-commands.jsonl")).filter(
      (c) => isWrite(c) && c.tool === "wipefs",
    );
    expect(wipes.map((c) => c.requested.at(-1))).toEqual([E]);
  });

  it("adopts the PV whose pvcreate start was journaled, so the resumed group has every approved device", async () => {
    const [B, E] = [scratch.loop(), scratch.loop()];
    const vg = `agt-resume-${randomBytes(3).toString("hex")}`;
    const spec = thickSpec(vg, [B, E]);
    const approved = await killAfterPvcreate("node-resume-adopt", [B, E], B, spec);

    const second = await start(options("node-resume-adopt", [B, E]));
    const resumed = await request(second.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: approved.hash },
    });
    if (resumed.status !== 200) throw new Error(`resume: HTTP ${resumed.status}: ${resumed.text}`);
    expect(vgs([B, E])).toEqual([expect.objectContaining({ vg_name: vg, pv_count: "2" })]);
    expect(membersOf([B, E], vg)).toEqual([B, E].sort());
    // adopted: the resume created no PV on B again
    expect(
      resumed.json.steps.filter(
        (s: { op: string; device?: string }) => s.op === "pvcreate" && s.device === B,
      ),
    ).toEqual([]);
    const status = await request(second.url, "GET", "/v1/status", { token });
    expect(status.json.status.volumeGroups[0]).toMatchObject({ name: vg, state: "Healthy" });
  });
});
