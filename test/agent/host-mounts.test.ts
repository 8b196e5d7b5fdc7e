/**
 * The agent must judge mounts by the host's mount table when it runs in a mount namespace of its own
 * (a DaemonSet's container; issue 11, item 13): `--mountinfo` (by default pid 1's under
 * `--command-prefix`). Real agents in private mount namespaces (AgentOptions.ownMachine), a real
 * ext4 on a loop device mounted by the test after they started, so only the host's table shows it.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import {
  request,
  requireHostTier,
  Scratch,
  startAgent,
  thickSpec,
  writeTokenFile,
  type AgentProcess,
} from "./harness";

jest.setTimeout(120_000);

let scratch: Scratch;
const agents: AgentProcess[] = [];
let mnt: string | undefined;

beforeAll(() => {
  requireHostTier();
  scratch = new Scratch("host-mounts");
});

afterAll(async () => {
  await Promise.all(agents.map((a) => a.stop()));
  if (mnt) execFileSync("umount", [mnt]);
  scratch?.cleanup();
});

it("a device mounted only in the host's namespace is excluded when the agent reads the host's mountinfo", async () => {
  const L1 = scratch.loop();
  const vg = `agt-hmnt-${randomBytes(3).toString("hex")}`;
  const tokens = writeTokenFile(scratch.path("tokens"), { op: { user: "operator", node: "*" } });
  const start = async (node: string, extraArgs: string[]) => {
    const agent = await startAgent({
      node,
      devices: [L1],
      ...scratch.agentFiles(node),
      auth: { tokenFile: scratch.path("tokens") },
      ownMachine: true,
      extraArgs,
    });
    agents.push(agent);
    return agent;
  };
  const own = await start("node-own", []);
  const host = await start("node-host", ["--mountinfo", `/proc/${process.pid}/mountinfo`]);

  execFileSync("mkfs.ext4", ["-q", "-F", L1]);
  const dir = scratch.path("mnt");
  fs.mkdirSync(dir);
  execFileSync("mount", [L1, dir]); // after the agents' namespaces were made: they do not see it
  mnt = dir;

  const base = thickSpec(vg, [L1]);
  const spec = {
    ...base,
    volumeGroups: [{ ...base.volumeGroups[0]!, forceWipeDevicesAndDestroyAllData: true }],
  };
  const planOf = async (agent: AgentProcess) => {
    const res = await request(agent.url, "POST", "/v1/plan", { token: tokens.op!, body: { spec } });
    expect(res.status).toBe(200);
    return res.json;
  };
  // Its own table: the mounted filesystem looks unused, and the plan would wipe it.
  expect((await planOf(own)).actions.map((a: { op: string }) => a.op)).toContain("wipefs");
  // The host's table: excluded as mounted, nothing to do.
  const hostPlan = await planOf(host);
  expect(hostPlan.actions.filter((a: { op: string }) => a.op !== "write-lvmd-config")).toEqual([]);
  expect(JSON.stringify(hostPlan.volumeGroups[0].excluded)).toContain(`mounted at ${mnt}`);
});
