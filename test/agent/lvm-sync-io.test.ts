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

/**
 * lvm in another mount namespace, as through `nsenter --target 1 --mount` in a pod: a prefix that runs
 * each command in a new mount namespace where the paths `binds` name are the directories under
 * `root` (the host's filesystem, which the agent sees under --host-root).
 */
function namespacePrefix(name: string, root: string, binds: readonly string[]): string {
  const script = bed.scratch.path(name);
  const mounts = binds.map((_, i) => `mount --bind "$1$${i + 2}" "$${i + 2}"`).join(" && ");
  fs.writeFileSync(
    script,
    `#!/bin/sh\nexec unshare --mount --propagation private -- sh -c '${mounts} && shift ${binds.length + 1} && exec "$@"' sh ${[root, ...binds].map((b) => `"${b}"`).join(" ")} "$@"\n`,
    { mode: 0o755 },
  );
  return script;
}

it("through a --command-prefix into another mount namespace: the host's configuration, read and copied under --host-root, is what lvm runs with", async () => {
  const files = bed.scratch.agentFiles("ns");
  const from = bed.scratch.path("ns-lvm");
  const to = path.join(files.stateDir, "lvm-sync-io");
  const root = bed.scratch.path("ns-host-root");
  // The agent's own /etc/lvm (the image's) and the host's differ; lvm must run with the host's.
  for (const [dir, days] of [
    [from, 1],
    [root + from, 9],
  ] as const) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "lvm.conf"), `backup {\n\tretain_days = ${days}\n}\n`);
  }
  fs.mkdirSync(to, { recursive: true });
  fs.mkdirSync(root + to, { recursive: true });
  const prefix = namespacePrefix("ns-prefix", root, [from, to]);
  const tokenFile = bed.scratch.path("ns-tokens");
  const token = writeTokenFile(tokenFile, { op: { user: "operator", node: "node-sync-io-ns" } }).op!;
  const L3 = bed.scratch.loop(64);
  const agent = await startAgent({
    node: "node-sync-io-ns",
    devices: [L3],
    ...files,
    auth: { tokenFile },
    extraArgs: [
      ...["--command-prefix", prefix, "--host-root", root, "--mountinfo", "/proc/self/mountinfo"],
      ...["--lvm-system-dir", from, "--lvm-sync-io"],
    ],
  });
  try {
    const inv = await request(agent.url, "GET", "/v1/inventory", { token });
    expect({ status: inv.status, text: inv.status === 200 ? "" : inv.text }).toEqual({
      status: 200,
      text: "",
    });
    expect(inv.json.devices.map((d: { kname: string }) => d.kname)).toEqual([L3]);
    // What lvm reads where it runs: the host's setting, synchronous I/O.
    const seen = execFileSync(
      prefix,
      ["lvmconfig", "--type", "full", "global/use_aio", "backup/retain_days"],
      {
        env: { PATH: process.env.PATH, LC_ALL: "C", LVM_SUPPRESS_FD_WARNINGS: "1", LVM_SYSTEM_DIR: to },
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      },
    );
    expect(seen).toContain("use_aio=0");
    expect(seen).toContain("retain_days=9");
    // Nothing was written at that path in the agent's own namespace.
    expect(fs.readdirSync(to)).toEqual([]);
  } finally {
    await agent.stop();
  }
});

it("through a --command-prefix with a --host-root that is not where lvm runs: the agent does not start, and says why", async () => {
  const files = bed.scratch.agentFiles("wrong-root");
  const from = bed.scratch.path("wrong-root-lvm");
  const to = path.join(files.stateDir, "lvm-sync-io");
  const root = bed.scratch.path("wrong-root-host");
  const wrong = bed.scratch.path("wrong-root-elsewhere");
  for (const dir of [from, root + from, wrong + from]) {
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, "lvm.conf"), "backup {\n\tretain_days = 9\n}\n");
  }
  fs.mkdirSync(to, { recursive: true });
  fs.mkdirSync(root + to, { recursive: true });
  const prefix = namespacePrefix("wrong-root-prefix", root, [from, to]);
  const tokenFile = bed.scratch.path("wrong-root-tokens");
  writeTokenFile(tokenFile, { op: { user: "operator", node: "node-sync-io-wrong-root" } });
  await expect(
    startAgent({
      node: "node-sync-io-wrong-root",
      devices: [bed.scratch.loop(64)],
      ...files,
      auth: { tokenFile },
      extraArgs: [
        ...["--command-prefix", prefix, "--host-root", wrong, "--mountinfo", "/proc/self/mountinfo"],
        ...["--lvm-system-dir", from, "--lvm-sync-io"],
      ],
    }),
  ).rejects.toThrow(
    /--lvm-sync-io: .*lvm, where it runs, reads another configuration from .*lvm-sync-io than the copy of the host's: .*global\/use_aio is unset, not 0/,
  );
  expect(fs.readdirSync(root + to)).toEqual([]);
});
