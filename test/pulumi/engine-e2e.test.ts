/**
 * `pulumi preview`, `up`, `refresh` and `destroy` with the real engine: the Pulumi CLI and its
 * Node.js language host built from their Go modules (test/pulumi/install.sh), a file backend, the
 * program in test/pulumi/program (one NodeSetDisks, loaded by the Node.js host's own TypeScript
 * support), the dynamic provider run by the engine through the pulumi-resource-pulumi-nodejs plugin,
 * against a real agent process on loop devices (host tier: lvm metadata only, so a Thick class).
 * Every outcome on disk is checked with the test's own `vgs`/`pvs`, never through the agent.
 *
 * The binaries missing is a failure that says how to build them (cli.ts), never a skip.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  commandLog,
  isWrite,
  lvm,
  membersOf,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";
import { PulumiWorkspace, pulumiVersion, requirePulumiBinaries, type StateResource } from "./cli";
import { linesWith, planList } from "./preview-plan";

jest.setTimeout(600_000);

const NODE = "node-e2e";
const VG = `pe2e-${randomBytes(3).toString("hex")}`;
const STACK = "e2e";
const RESOURCE_TYPE = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";
/** Where the backing files of our loop devices go (volume groups pe2e-*). */
const ROOT = "/var/tmp/pulumi-e2e-tests";
/** The key Pulumi marks a secret with, in the state and on the wire. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";

let scratch: Scratch | undefined;
let agent: AgentProcess | undefined;
let ws: PulumiWorkspace | undefined;
let token: string;
const started = Date.now();
/** L1, L2 blank; L3 holds ext4 (in the selector, never eligible); L4 blank, added to the selector later. */
let L1: string, L2: string, L3: string, L4: string;
let devices: string[];

beforeAll(async () => {
  requirePulumiBinaries();
  requireHostTier();
  scratch = new Scratch("engine", ROOT);
  [L1, L2, L3, L4] = [scratch.loop(), scratch.loop(), scratch.loop(), scratch.loop()];
  devices = [L1, L2, L3, L4];
  execFileSync("mkfs.ext4", ["-q", "-F", L3], { stdio: "ignore" });
  token = writeTokenFile(scratch.path("tokens"), { op: { user: "pulumi", node: NODE } }).op!;
  agent = await startAgent({
    node: NODE,
    devices,
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
  });

  ws = new PulumiWorkspace(STACK, randomBytes(12).toString("hex"), { root: ROOT });
  ws.init();
  ws.ok(["config", "set", "node", NODE]);
  ws.ok(["config", "set", "agentUrl", agent.url]);
  // From stdin, so the token is not on any command line either.
  ws.ok(["config", "set", "--secret", "agentToken"], { input: token });
  ws.ok(["config", "set", "volumeGroup", VG]);
  [L1, L2, L3].forEach((dev, i) => ws!.ok(["config", "set", "--path", `devices[${i}]`, dev]));
});

afterAll(async () => {
  await agent?.stop();
  scratch?.cleanup();
  ws?.cleanup();
  console.log(`engine e2e: ${((Date.now() - started) / 1000).toFixed(1)} s`);
});

const writesSince = (n: number) => commandLog(scratch!.path("commands.jsonl")).slice(n).filter(isWrite);
const logLength = () => commandLog(scratch!.path("commands.jsonl")).length;
const disks = () => ({ vgs: vgs(devices), members: membersOf(devices, VG) });

/** The NodeSetDisks resource in `pulumi stack export`. */
function disksResource(): StateResource | undefined {
  return ws!.exportState().deployment.resources?.find((r) => r.type === RESOURCE_TYPE);
}

interface NodeState {
  state?: string;
  planHash: string;
  stepsDone: number;
  volumeGroups?: Record<string, { state: string; members: string[]; message?: string }>;
}
const nodeOf = (r: StateResource | undefined) =>
  (r?.outputs?.nodes as Record<string, NodeState> | undefined)?.[NODE];

describe("the engine", () => {
  it("runs the program on the Node.js language host of the CLI's release (test/pulumi/install.sh), not an older one", () => {
    const about = JSON.parse(ws!.ok(["about", "--json"]).stdout) as {
      plugins?: Array<{ name: string; kind: string; version: string }>;
      cliAbout?: { version: string };
    };
    const version = pulumiVersion().replace(/^v/, "");
    expect(about.cliAbout?.version).toBe(version);
    expect(about.plugins?.filter((p) => p.kind === "language")).toEqual([
      { name: "nodejs", kind: "language", version },
    ]);
  });
});

describe("pulumi preview --diff", () => {
  it("shows the node's plan: the loop devices claimed for the new volume group, the excluded one and why; nothing written", () => {
    const before = logLength();
    const { output } = ws!.ok(["preview", "--diff"]);
    expect(output).toContain(`+ ${RESOURCE_TYPE}: (create)`);
    expect(output).toContain(`${NODE}: {`);
    expect(planList(output, "claimed").sort()).toEqual(
      [L1, L2].sort().map((d) => `${d} → ${VG} (new volume group)`),
    );
    expect(planList(output, "excluded")).toEqual([expect.stringMatching(new RegExp(`^${L3}: .*ext4`))]);
    expect(planList(output, "actions").map((a) => a.split(":")[0])).toEqual(
      expect.arrayContaining([`pvcreate ${L1}`, `pvcreate ${L2}`, `vgcreate ${VG}`]),
    );
    expect(writesSince(before)).toEqual([]);
    expect(vgs(devices)).toEqual([]);
  });
});

describe("pulumi up", () => {
  it("creates the volume group on the claimed loop devices, and leaves the excluded one alone", () => {
    const { output } = ws!.ok(["up", "--yes"]);
    expect(output).toMatch(/\+ 2 created/); // the stack and the NodeSetDisks
    expect(vgs(devices)).toEqual([
      expect.objectContaining({ vg_name: VG, pv_count: "2", vg_tags: "pulumi-lvm" }),
    ]);
    expect(membersOf(devices, VG)).toEqual([L1, L2].sort());
    expect(execFileSync("blkid", ["-p", "-o", "value", "-s", "TYPE", L3], { encoding: "utf8" }).trim()).toBe(
      "ext4",
    );
    const node = nodeOf(disksResource());
    expect(node).toMatchObject({ planHash: expect.stringMatching(/^[0-9a-f]{16,}$/), stepsDone: 6 });
  });

  it("a second preview has nothing to do: --expect-no-changes passes, nothing is written", () => {
    const before = { log: logLength(), disks: disks() };
    const { output } = ws!.ok(["preview", "--expect-no-changes", "--diff"]);
    expect(output).not.toMatch(/to update|to create|to delete/);
    expect(writesSince(before.log)).toEqual([]);
    expect(disks()).toEqual(before.disks);
  });

  it("a disk added to the selector (a config change): preview shows the extend, up applies it", () => {
    ws!.ok(["config", "set", "--path", "devices[3]", L4]);
    const preview = ws!.ok(["preview", "--diff"]);
    expect(preview.output).toMatch(/~ 1 to update/);
    expect(planList(preview.output, "extended")).toEqual([`${L4} → ${VG}`]);
    expect(planList(preview.output, "claimed")).toEqual([]);
    const withWork = ws!.run(["preview", "--expect-no-changes"]);
    expect(withWork.code).not.toBe(0); // the same check that passed above fails when there is work

    ws!.ok(["up", "--yes"]);
    expect(membersOf(devices, VG)).toEqual([L1, L2, L4].sort());
    expect(vgs(devices)[0]!.pv_count).toBe("3");
    expect(nodeOf(disksResource())).toMatchObject({ stepsDone: 3 });
  });
});

describe("pulumi refresh after a change made on the node", () => {
  it("records the degraded volume group and its missing member in the state; up repairs it", () => {
    ws!.ok(["refresh", "--yes"]);
    const clean = nodeOf(disksResource());
    expect(clean).toMatchObject({ state: "Ready" });
    expect(clean!.volumeGroups![VG]).toEqual({ state: "Healthy", members: [L1, L2, L4].sort() });

    lvm(devices, ["vgreduce", VG, L2]);
    lvm(devices, ["pvremove", L2]);
    expect(membersOf(devices, VG)).toEqual([L1, L4].sort());

    const refresh = ws!.ok(["refresh", "--yes"]);
    expect(refresh.output).toMatch(/~ 1 updated/);
    const drifted = nodeOf(disksResource());
    expect(drifted).toMatchObject({ state: "Degraded" });
    expect(drifted!.volumeGroups![VG]).toEqual({
      state: "Degraded",
      members: [L1, L4].sort(),
      message: expect.stringContaining(`pvcreate ${L2}; vgextend ${VG} ${L2}`),
    });

    const preview = ws!.ok(["preview", "--diff"]);
    expect(planList(preview.output, "extended")).toEqual([`${L2} → ${VG}`]);
    ws!.ok(["up", "--yes"]);
    expect(membersOf(devices, VG)).toEqual([L1, L2, L4].sort());
  });
});

describe("secrets", () => {
  it("the agent token is stored only encrypted: not in stack export, the backend's files, the stack config, nor any output", () => {
    const exported = ws!.exportState();
    expect(linesWith(exported.text, token)).toEqual([]);
    // It is there, as a secret: the inputs hold the agent's token under Pulumi's secret signature.
    const agents = disksResource()!.inputs!.agents as Record<string, unknown>;
    expect(JSON.stringify(agents)).toContain(SECRET_SIG_KEY);
    expect(ws!.ok(["stack", "export", "--show-secrets"]).stdout).toContain(token);

    const files = [...PulumiWorkspace.filesUnder(ws!.backend), ...PulumiWorkspace.filesUnder(ws!.project)];
    expect(files.length).toBeGreaterThan(2);
    expect(files.flatMap((f) => linesWith(f.text, token).map((l) => `${f.file}: ${l}`))).toEqual([]);
    const shown = ws!.transcript.filter((t) => !t.startsWith("$ pulumi stack export --show-secrets"));
    expect(shown.flatMap((t) => linesWith(t, token))).toEqual([]);
  });
});

describe("pulumi destroy", () => {
  it("deletionPolicy Retain: the stack is emptied, the volume group stays on disk, nothing is written", () => {
    const before = { log: logLength(), disks: disks() };
    const { output } = ws!.ok(["destroy", "--yes"]);
    expect(output).toMatch(/- 2 deleted/);
    expect(disksResource()).toBeUndefined();
    expect(writesSince(before.log)).toEqual([]);
    expect(disks()).toEqual(before.disks);
    expect(disks().members).toEqual([L1, L2, L4].sort());
  });
});
