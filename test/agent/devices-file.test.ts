/**
 * lvm's devices file on a host that uses it (RHEL 9-family defaults: use_devicesfile=1,
 * /etc/lvm/devices/system.devices), with this machine's lvm2 and the agent on two loop devices. The
 * host's configuration is never touched: the agent and the "host's lvm" of this test both read a
 * scratch LVM_SYSTEM_DIR whose lvm.conf turns the file on and whose devices/system.devices starts
 * empty. After an apply the host's plain `vgs` (no --config) and an lvmd-style `nsenter ... lvm vgs`
 * list the group; a member taken out of the file makes the group Degraded and the next plan lists it
 * again; after teardown the file holds none of our devices.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { agentTestbed } from "../support/agent/testbed";
import { commandLog, commandLogLines, planAndApply, request, thickSpec, type AgentProcess } from "./harness";

jest.setTimeout(120_000);

const bed = agentTestbed("devices-file");
let agent: AgentProcess;
let token: string;
let L1: string, L2: string;
let systemDir: string;
const VG = `agt-df-${randomBytes(3).toString("hex")}`;
const spec = () => thickSpec(VG, [L1, L2]);

/** The host's lvm as lvmd or an admin runs it: no --config, the (scratch) system directory's devices file. */
function hostLvm(argv: readonly string[], viaNsenter = false): string {
  const env = {
    PATH: process.env.PATH,
    LC_ALL: "C",
    LVM_SUPPRESS_FD_WARNINGS: "1",
    LVM_SYSTEM_DIR: systemDir,
  };
  // lvmd runs `nsenter -m -u -i -n -p -t 1 lvm ...`; this sandbox lets no one enter PID 1's namespaces,
  // so the test enters its own, as test/image does.
  const [cmd, args] = viaNsenter
    ? ["nsenter", ["-m", "-u", "-i", "-n", "-p", "-t", String(process.pid), "--", "lvm", ...argv]]
    : ["lvm", [...argv]];
  return execFileSync(cmd as string, args as string[], {
    env,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  });
}
const hostVgs = (viaNsenter = false) =>
  hostLvm(["vgs", "--noheadings", "-o", "vg_name"], viaNsenter)
    .split("\n")
    .map((l) => l.trim())
    .filter(Boolean);
const fileLines = () =>
  fs
    .readFileSync(path.join(systemDir, "devices", "system.devices"), "utf8")
    .split("\n")
    .filter((l) => l.startsWith("IDTYPE="));

beforeAll(async () => {
  [L1, L2] = [bed.scratch.loop(), bed.scratch.loop()];
  systemDir = bed.scratch.path("lvm");
  fs.mkdirSync(path.join(systemDir, "devices"), { recursive: true });
  fs.writeFileSync(
    path.join(systemDir, "lvm.conf"),
    'devices {\n\tuse_devicesfile = 1\n\tdevicesfile = "system.devices"\n}\n',
  );
  fs.writeFileSync(path.join(systemDir, "devices", "system.devices"), "");
  ({ agent, token } = await bed.start({
    node: "node-df",
    devices: [L1, L2],
    extraArgs: ["--lvm-system-dir", systemDir],
  }));
});

it("the inventory reports the host's devices file: on, empty", async () => {
  const inv = await request(agent.url, "GET", "/v1/inventory", { token });
  expect(inv.status).toBe(200);
  expect(inv.json.devicesFile).toEqual({ enabled: true, name: "system.devices", exists: true, entries: [] });
});

it("apply: the plan lists each new PV in the file; the host's plain vgs and an lvmd-style nsenter lvm vgs see the group", async () => {
  const { plan } = await planAndApply(agent.url, token, spec());
  expect(plan.actions.map((a: { argv: string[] }) => a.argv.join(" ")).slice(0, 5)).toEqual([
    `pvcreate ${L1}`,
    `pvcreate ${L2}`,
    `lvm lvmdevices --adddev ${L1}`,
    `lvm lvmdevices --adddev ${L2}`,
    `vgcreate --addtag pulumi-lvm ${VG} ${L1} ${L2}`,
  ]);
  expect(
    fileLines()
      .map((l) => /DEVNAME=(\S+)/.exec(l)![1])
      .sort(),
  ).toEqual([L1, L2].sort());
  expect(hostVgs()).toEqual([VG]);
  expect(hostVgs(true)).toEqual([VG]);
  const status = await request(agent.url, "GET", "/v1/status", { token });
  expect(status.json.status.volumeGroups[0]).toMatchObject({ name: VG, state: "Healthy" });
  // converged: the next plan has nothing to do
  const again = await request(agent.url, "POST", "/v1/plan", { token, body: { spec: spec() } });
  expect(again.json.actions.filter((a: { op: string }) => a.op !== "write-lvmd-config")).toEqual([]);
});

it("a member taken out of the file: the group is Degraded naming it, and the next apply lists it again", async () => {
  hostLvm(["lvmdevices", "--deldev", L2]);
  const status = await request(agent.url, "GET", "/v1/status", { token });
  expect(status.json.status.volumeGroups[0]).toMatchObject({
    name: VG,
    state: "Degraded",
    message: expect.stringContaining(
      `physical volume ${L2} of ${VG} is not in lvm's devices file system.devices`,
    ),
  });
  const { plan } = await planAndApply(agent.url, token, spec());
  expect(
    plan.actions
      .filter((a: { op: string }) => a.op !== "write-lvmd-config")
      .map((a: { argv: string[] }) => a.argv.join(" ")),
  ).toEqual([`lvm lvmdevices --adddev ${L2}`]);
  expect(hostLvm(["vgs", "--noheadings", "-o", "pv_count", VG]).trim()).toBe("2");
  const after = await request(agent.url, "GET", "/v1/status", { token });
  expect(after.json.status.volumeGroups[0]).toMatchObject({ name: VG, state: "Healthy" });
});

it("teardown: each device leaves the file before its pvremove; the host's lvm sees nothing of ours", async () => {
  const res = await request(agent.url, "POST", "/v1/teardown", {
    token,
    body: { spec: spec(), volumeGroup: VG },
  });
  if (res.status !== 200) throw new Error(`teardown: HTTP ${res.status}: ${res.text}`);
  const ran = commandLog(bed.scratch.path("commands.jsonl")).map((c) => c.requested.join(" "));
  const del = ran.lastIndexOf(`lvm lvmdevices --deldev ${L1}`);
  expect(del).toBeGreaterThan(ran.lastIndexOf(`vgremove ${VG}`));
  expect(del).toBeLessThan(ran.lastIndexOf(`pvremove ${L1}`));
  expect(fileLines()).toEqual([]);
  expect(hostVgs()).toEqual([]);
  expect(hostVgs(true)).toEqual([]);
});

it("every other lvm command ran with use_devicesfile=0; lvmdevices and the settings read ran with the host's", () => {
  const ended = commandLogLines(bed.scratch.path("commands.jsonl")).filter((l) => l.event === "end");
  const lvmRuns = ended
    .map((l) => ({ requested: l.requested, argv: (l as unknown as { argv: string[] }).argv }))
    .filter((c) => c.argv.includes("--config"));
  expect(lvmRuns.some((c) => c.requested[1] === "lvmdevices")).toBe(true);
  for (const c of lvmRuns) {
    const config = c.argv[c.argv.indexOf("--config") + 1]!;
    const hostFile =
      c.requested[0] === "lvm" &&
      (c.requested[1] === "lvmdevices" || c.requested.includes("devices/use_devicesfile"));
    expect({ cmd: c.requested.join(" "), off: config.includes("use_devicesfile=0") }).toEqual({
      cmd: c.requested.join(" "),
      off: !hostFile,
    });
  }
});
