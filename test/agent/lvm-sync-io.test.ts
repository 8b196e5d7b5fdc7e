/**
 * `--lvm-sync-io` (issue 18): at start the agent writes a copy of the lvm configuration it was given
 * (--lvm-system-dir, else /etc/lvm) with use_aio = 0 into <state-dir>/lvm-sync-io and runs lvm with
 * it; a configuration lvm cannot read stops the agent with an error naming the flag.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { agentTestbed } from "../support/agent/testbed";
import { request, startAgent, writeTokenFile } from "./harness";

jest.setTimeout(120_000);

const bed = agentTestbed("lvm-sync-io");

const lvmconfig = (systemDir: string, ...settings: string[]) =>
  execFileSync("lvmconfig", ["--type", "full", ...settings], {
    env: { PATH: process.env.PATH, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1", LVM_SYSTEM_DIR: systemDir },
    encoding: "utf8",
    stdio: ["ignore", "pipe", "ignore"],
  });

it("writes the copy of the given configuration with use_aio 0 under the state directory, and lvm runs with it", async () => {
  const host = bed.scratch.path("host-lvm");
  fs.mkdirSync(host);
  fs.writeFileSync(
    path.join(host, "lvm.conf"),
    "global {\n\tuse_aio = 1\n}\nbackup {\n\tretain_days = 9\n}\n",
  );
  const L1 = bed.scratch.loop(64);
  const { agent, token } = await bed.start({
    node: "node-sync-io",
    devices: [L1],
    extraArgs: ["--lvm-system-dir", host, "--lvm-sync-io"],
  });
  const copy = path.join(bed.scratch.agentFiles().stateDir, "lvm-sync-io");
  const values = lvmconfig(copy, "global/use_aio", "backup/retain_days");
  expect(values).toContain("use_aio=0");
  expect(values).toContain("retain_days=9");
  const inv = await request(agent.url, "GET", "/v1/inventory", { token });
  expect({ status: inv.status, text: inv.status === 200 ? "" : inv.text }).toEqual({ status: 200, text: "" });
  expect(inv.json.devices.map((d: { kname: string }) => d.kname)).toEqual([L1]);
});

it("a configuration lvm cannot read: the agent does not start, and says why", async () => {
  const broken = bed.scratch.path("broken-lvm");
  fs.mkdirSync(broken);
  fs.writeFileSync(path.join(broken, "lvm.conf"), "global {\n\tuse_aio = \n");
  const L2 = bed.scratch.loop(64);
  const tokenFile = bed.scratch.path("broken-tokens");
  writeTokenFile(tokenFile, { op: { user: "operator", node: "node-sync-io-2" } });
  // Its own state directory: the first test's agent still holds the testbed's.
  await expect(
    startAgent({
      node: "node-sync-io-2",
      devices: [L2],
      ...bed.scratch.agentFiles("broken"),
      auth: { tokenFile },
      extraArgs: ["--lvm-system-dir", broken, "--lvm-sync-io"],
    }),
  ).rejects.toThrow(/--lvm-sync-io: cannot write .*lvm-sync-io from the lvm configuration in .*broken-lvm/);
});
