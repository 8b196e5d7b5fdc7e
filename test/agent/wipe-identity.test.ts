/**
 * Wipes with real processes on loop devices (issue 11, items 4 and 8): a wipe is approved for the
 * signatures the reviewer saw — their type, UUID, label and offset are in the plan and its hash — and
 * the journal's "never wipe twice" record does not outlive the operation that wiped.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { membersOf, pvs, request, Scratch, thickSpec } from "./harness";
import { agentFleet } from "../support/agent/testbed";

jest.setTimeout(180_000);

const fleet = agentFleet("wipe-identity");
let scratch: Scratch;
let token: string;
beforeAll(() => ({ scratch, token } = fleet));

const start = (node: string, devices: string[]) => fleet.start(fleet.options(node, devices));

function wipingSpec(vg: string, devices: string[]) {
  const spec = thickSpec(vg, devices);
  return { ...spec, volumeGroups: [{ ...spec.volumeGroups[0]!, forceWipeDevicesAndDestroyAllData: true }] };
}

function mkfs(device: string, label: string): string {
  execFileSync("mkfs.ext4", ["-q", "-F", "-L", label, device], { stdio: "ignore" });
  return blkid(device, "UUID");
}

function blkid(device: string, tag: string): string {
  try {
    return execFileSync("blkid", ["-p", "-o", "value", "-s", tag, device], { encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

describe("a wipe is approved for the signatures the reviewer saw", () => {
  it("names each signature's type, UUID, label and offset in the plan and its text, and refuses (409) when the filesystem was re-made", async () => {
    const [L1] = [scratch.loop()];
    const vg = `agt-wipe-${randomBytes(3).toString("hex")}`;
    const spec = wipingSpec(vg, [L1]);
    const oldUuid = mkfs(L1, "scratch");
    const agent = await start("node-wipe-1", [L1]);
    const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
    expect(plan.status).toBe(200);
    const wipe = plan.json.actions.find((a: { op: string }) => a.op === "wipefs");
    expect(wipe).toBeDefined();
    expect(wipe.signatures).toEqual([
      expect.objectContaining({ type: "ext4", uuid: oldUuid, label: "scratch" }),
    ]);
    expect(wipe.reason).toContain(oldUuid);
    expect(plan.json.volumeGroups[0].claimed[0].wipeSignatures).toEqual(wipe.signatures);

    // After the review, someone re-makes the filesystem and puts precious data on it.
    const newUuid = mkfs(L1, "precious");
    expect(newUuid).not.toBe(oldUuid);
    const applied = await request(agent.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: plan.json.hash },
    });
    expect({ status: applied.status, code: applied.json?.error?.code }).toEqual({
      status: 409,
      code: "PlanChanged",
    });
    expect(blkid(L1, "UUID")).toBe(newUuid);
    expect(blkid(L1, "LABEL")).toBe("precious");
    expect(pvs([L1])).toEqual([]);
  });
});

describe("never wipe twice is scoped to the operation that wiped", () => {
  it("wipes a disk that was torn down, re-formatted and planned again with forceWipe", async () => {
    const [L1] = [scratch.loop()];
    const vg = `agt-wipe-${randomBytes(3).toString("hex")}`;
    const spec = wipingSpec(vg, [L1]);
    mkfs(L1, "first");
    const agent = await start("node-wipe-2", [L1]);
    const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
    const first = await request(agent.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: plan.json.hash },
    });
    if (first.status !== 200) throw new Error(`apply: HTTP ${first.status}: ${first.text}`);
    expect(membersOf([L1], vg)).toEqual([L1]);

    const down = await request(agent.url, "POST", "/v1/teardown", { token, body: { spec } });
    if (down.status !== 200) throw new Error(`teardown: HTTP ${down.status}: ${down.text}`);
    expect(pvs([L1])).toEqual([]);

    const secondUuid = mkfs(L1, "second");
    const again = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
    const wipe = again.json.actions.find((a: { op: string }) => a.op === "wipefs");
    expect(wipe?.signatures).toEqual([expect.objectContaining({ type: "ext4", uuid: secondUuid })]);
    const second = await request(agent.url, "POST", "/v1/apply", {
      token,
      body: { spec, planHash: again.json.hash },
    });
    if (second.status !== 200) throw new Error(`second apply: HTTP ${second.status}: ${second.text}`);
    const ran = second.json.steps.find((s: { op: string }) => s.op === "wipefs");
    expect(ran).toMatchObject({ outcome: "done" });
    expect(membersOf([L1], vg)).toEqual([L1]);
  });
});
