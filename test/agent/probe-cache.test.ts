/**
 * The agent's discovery cache (src/inventory/probe-cache.ts, issue 18) end to end, on loop devices: a
 * second GET /v1/inventory probes nothing when nothing changed and says so in /metrics; mkfs.ext4 run
 * behind the agent's back is seen on the next inventory (that device alone probed again); an apply
 * discovers with every device probed afresh; `--no-probe-cache` probes every device every time.
 */
import { execFileSync } from "node:child_process";
import { agentTestbed } from "../support/agent/testbed";
import { commandLog, request, startAgent, thickSpec, writeTokenFile } from "./harness";

jest.setTimeout(120_000);

const bed = agentTestbed("probe-cache");

/** The devices each wipefs --no-act of the log ran on, from entry `from` on. */
function probedSince(file: string, from: number): string[] {
  return commandLog(file)
    .slice(from)
    .filter((c) => c.tool === "wipefs")
    .flatMap((c) => c.requested.filter((a) => a.startsWith("/dev/")))
    .sort();
}

function cacheCounts(metrics: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const m of metrics.matchAll(
    /^pulumi_lvm_agent_discovery_cache_lookups_total\{cache="(\w+)",result="(\w+)"\} (\d+)$/gm,
  ))
    out[`${m[1]}:${m[2]}`] = Number(m[3]);
  return out;
}

it("probes nothing again while nothing changed, sees mkfs.ext4 behind its back, and an apply probes afresh", async () => {
  const [L1, L2] = [bed.scratch.loop(64), bed.scratch.loop(64)];
  const { agent, token } = await bed.start({ node: "node-probe-cache", devices: [L1!, L2!] });
  const log = bed.scratch.agentFiles().commandLog;
  const inventory = async () => {
    const res = await request(agent.url, "GET", "/v1/inventory", { token });
    expect(res.status).toBe(200);
    return res.json as { devices: Array<{ kname: string; signatures: Array<{ type: string }> }> };
  };

  await inventory();
  let from = commandLog(log).length;
  await inventory();
  expect(probedSince(log, from)).toEqual([]);
  const metrics = (await request(agent.url, "GET", "/metrics")).text;
  expect(cacheCounts(metrics)).toMatchObject({ "signatures:miss": 2, "signatures:hit": 2, "sysfs:hit": 2 });

  execFileSync("mkfs.ext4", ["-q", "-F", L1!]);
  from = commandLog(log).length;
  const after = await inventory();
  expect(probedSince(log, from)).toEqual([L1]);
  expect(after.devices.find((d) => d.kname === L1)!.signatures.map((s) => s.type)).toEqual(["ext4"]);

  // The apply's discovery uses nothing cached: both devices probed, though neither changed.
  const spec = thickSpec("vg-probe-cache", [L2!]);
  const plan = await request(agent.url, "POST", "/v1/plan", { token, body: { spec } });
  expect(plan.status).toBe(200);
  from = commandLog(log).length;
  const applied = await request(agent.url, "POST", "/v1/apply", {
    token,
    body: { spec, planHash: plan.json.hash },
  });
  expect({ status: applied.status, text: applied.status === 200 ? "" : applied.text }).toEqual({
    status: 200,
    text: "",
  });
  expect(probedSince(log, from)).toEqual([L1, L2].sort());
  // After the apply, L2 (written by pvcreate and vgcreate) is probed again, L1 is not.
  from = commandLog(log).length;
  const last = await inventory();
  expect(probedSince(log, from)).toEqual([L2]);
  expect(last.devices.find((d) => d.kname === L2)!.signatures.map((s) => s.type)).toEqual(["LVM2_member"]);
});

it("--no-probe-cache: every inventory probes every device, and /metrics counts no lookups", async () => {
  const L3 = bed.scratch.loop(64);
  const files = bed.scratch.agentFiles("no-cache");
  const tokenFile = bed.scratch.path("no-cache-tokens");
  const token = writeTokenFile(tokenFile, { op: { user: "operator", node: "node-no-cache" } }).op!;
  const agent = await startAgent({
    node: "node-no-cache",
    devices: [L3],
    ...files,
    auth: { tokenFile },
    extraArgs: ["--no-probe-cache"],
  });
  try {
    for (let i = 0; i < 3; i++) {
      const from = commandLog(files.commandLog).length;
      expect((await request(agent.url, "GET", "/v1/inventory", { token })).status).toBe(200);
      expect(probedSince(files.commandLog, from)).toEqual([L3]);
    }
    expect(cacheCounts((await request(agent.url, "GET", "/metrics")).text)).toEqual({});
  } finally {
    await agent.stop();
  }
});
