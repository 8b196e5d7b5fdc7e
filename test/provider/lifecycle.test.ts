/**
 * The NodeSetDisks dynamic provider as `pulumi preview`, `up`, `refresh` and `destroy` drive it:
 * through the real dynamic-provider host of @pulumi/pulumi over gRPC (engine.ts plays the engine),
 * the provider's serialized code in `__provider`, against a real agent process on loop devices
 * (host tier: lvm metadata only, so a Thick device class). Every outcome on disk is checked with the
 * test's own `vgs`/`pvs`, never through the agent.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  commandLog,
  isWrite,
  lvm,
  membersOf,
  pvs,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";
import { freePort } from "../net";
import {
  plainOccurrences,
  ProviderError,
  ProviderHost,
  refreshDiff,
  secret,
  serializeProvider,
  type Props,
} from "./engine";
import { PROGRAM_DIR, PROVIDER_TESTS_ROOT } from "./paths";

jest.setTimeout(180_000);

const NODE = "node-prov";
const VG = `prov-${randomBytes(3).toString("hex")}`;
const ID = "lvm-system/edge";

let scratch: Scratch;
let agent: AgentProcess | undefined;
let host: ProviderHost | undefined;
let port: number;
let token: string;
let providerText: string;
/** L1, L2 blank; L3 holds ext4 (never eligible); L4 holds ext4 until the test wipes it; L5 comes later. */
const devices: string[] = [];
let L1: string, L2: string, L3: string, L4: string;

/** The resource as the engine keeps it in the state between operations. */
let state: { id: string; inputs: Props; outputs: Props } | undefined;

beforeAll(async () => {
  requireHostTier();
  scratch = new Scratch("lifecycle", PROVIDER_TESTS_ROOT);
  [L1, L2, L3, L4] = [scratch.loop(), scratch.loop(), scratch.loop(), scratch.loop()];
  devices.push(L1, L2, L3, L4);
  for (const dev of [L3, L4]) execFileSync("mkfs.ext4", ["-q", "-F", dev], { stdio: "ignore" });
  token = writeTokenFile(scratch.path("tokens"), { op: { user: "pulumi", node: NODE } }).op!;
  port = await freePort();
  await restartAgent();
  providerText = await serializeProvider();
  host = await ProviderHost.start(PROGRAM_DIR);
});

afterAll(async () => {
  await host?.stop();
  await agent?.stop();
  scratch?.cleanup();
});

/** (Re)starts the agent on its fixed port, confined to our devices, keeping its state directory. */
async function restartAgent(): Promise<void> {
  await agent?.stop();
  agent = await startAgent({
    node: NODE,
    devices,
    ...scratch.agentFiles(),
    auth: { tokenFile: scratch.path("tokens") },
    extraArgs: ["--listen", `127.0.0.1:${port}`],
  });
}

/** One volume group taking every eligible device the node has (`Any`), one Thick device class. */
function spec(extra: Props = {}): Props {
  return {
    volumeGroups: [
      {
        name: VG,
        minDeviceSize: "64Mi",
        deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }] },
      },
    ],
    deviceClasses: [{ name: `${VG}-thick`, strategy: "Thick", volumeGroup: VG, default: true }],
    ...extra,
  };
}

/** The inputs the program registers: what `new NodeSetDisks(...)` sends, the token a secret. */
function program(specExtra: Props = {}): Props {
  return {
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec: spec(specExtra),
    agents: { [NODE]: { url: `http://127.0.0.1:${port}`, token: secret(token) } },
    __provider: providerText,
  };
}

interface Summary {
  hash: string;
  selected: boolean;
  steps: number;
  claimed: string[];
  extended: string[];
  removed: string[];
  wiped: string[];
  excluded: string[];
  blocked: string[];
  actions: string[];
}
const summaryOf = (inputs: Props) => (inputs.plans as Record<string, Summary>)[NODE]!;
const nodeOf = (outputs: Props) => (outputs.nodes as Record<string, Record<string, unknown>>)[NODE]!;

const writesSince = (n: number) => commandLog(scratch.path("commands.jsonl")).slice(n).filter(isWrite);
const logLength = () => commandLog(scratch.path("commands.jsonl")).length;
const disks = () => ({ vgs: vgs(devices), pvs: pvs(devices) });
const ext4Reason = (dev: string) => expect.stringMatching(new RegExp(`^${dev}: .*ext4`));

async function expectFailure(call: Promise<unknown>): Promise<string> {
  const error = await call.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return (error as ProviderError).message;
}

describe("pulumi up: check → create", () => {
  let previewed: Props;

  it("check shows each node's plan: devices claimed, devices excluded with reasons; nothing written", async () => {
    const before = logLength();
    const { inputs, failures } = await host!.check({}, program());
    expect(failures).toEqual([]);
    const plan = summaryOf(inputs);
    expect(plan).toMatchObject({ selected: true, extended: [], removed: [], wiped: [], blocked: [] });
    expect(plan.claimed.sort()).toEqual([L1, L2].sort().map((d) => `${d} → ${VG} (new volume group)`));
    expect(plan.hash).toMatch(/^[0-9a-f]{16,}$/);
    expect(plan.excluded).toHaveLength(2);
    expect(plan.excluded).toEqual(expect.arrayContaining([ext4Reason(L3), ext4Reason(L4)]));
    const steps = plan.actions.map((a) => a.split(":")[0]!);
    expect(steps.map((s) => s.split(" ")[0])).toEqual([
      "pvcreate",
      "pvcreate",
      "vgcreate",
      "pvchange",
      "pvchange",
      "write-lvmd-config",
    ]);
    expect(steps).toEqual(
      expect.arrayContaining([
        `pvcreate ${L1}`,
        `pvcreate ${L2}`,
        `vgcreate ${VG}`,
        `pvchange ${L1}`,
        `pvchange ${L2}`,
      ]),
    );
    expect(plan.steps).toBe(plan.actions.length);
    expect(writesSince(before)).toEqual([]);
    expect(disks()).toEqual({ vgs: [], pvs: [] });
    previewed = inputs;
  });

  it("create refuses a plan whose disks changed after check: names the node, says the plan changed, applies nothing", async () => {
    execFileSync("wipefs", ["--all", "--quiet", L4]); // a disk freed between preview and up now matches
    const before = logLength();
    const message = await expectFailure(host!.create(previewed));
    const hash = summaryOf(previewed).hash;
    expect(message.split("\n")).toEqual([
      "applying node set lvm-system/edge failed:",
      expect.stringMatching(
        new RegExp(
          `^node ${NODE}: PlanChanged: the node changed since the plan was made: approved plan ${hash}, plan now (?!${hash})[0-9a-f]+;`,
        ),
      ),
      `  nothing was done on node ${NODE}: its disks changed after the plan (${hash}) was reviewed; run pulumi preview to review the new plan, then pulumi up`,
    ]);
    expect(writesSince(before)).toEqual([]);
    expect(disks()).toEqual({ vgs: [], pvs: [] });
  });

  it("create applies the plan with the hash seen at check; outputs per node", async () => {
    const { inputs, failures } = await host!.check({}, program());
    expect(failures).toEqual([]);
    const plan = summaryOf(inputs);
    expect(plan.claimed.sort()).toEqual([L1, L2, L4].sort().map((d) => `${d} → ${VG} (new volume group)`));
    expect(plan.excluded).toEqual([ext4Reason(L3)]);
    const created = await host!.create(inputs);
    expect(created.id).toBe(ID);
    expect(nodeOf(created.outputs)).toEqual({
      selected: true,
      planHash: plan.hash,
      stepsDone: plan.steps,
      stepsSkipped: 0,
      operation: expect.stringMatching(/.+/),
      blocked: [],
    });
    expect(vgs(devices)).toEqual([
      expect.objectContaining({ vg_name: VG, pv_count: "3", vg_tags: "pulumi-lvm" }),
    ]);
    expect(membersOf(devices, VG)).toEqual([L1, L2, L4].sort());
    state = { id: created.id, inputs, outputs: created.outputs };
  });
});

describe("pulumi up again", () => {
  it("no change: check plans nothing, diff says no changes, an update would apply nothing", async () => {
    const before = { log: logLength(), disks: disks() };
    const { inputs } = await host!.check(state!.inputs, program());
    expect(summaryOf(inputs)).toMatchObject({
      steps: 0,
      claimed: [],
      extended: [],
      removed: [],
      actions: [],
    });
    expect(await host!.diff(state!.id, state!.outputs, inputs, state!.inputs)).toEqual({
      changes: "none",
      replaces: [],
      deleteBeforeReplace: false,
    });
    // The engine stops here; an update forced by some other input change would not call the agent either.
    const updated = await host!.update(state!.id, state!.outputs, inputs, state!.inputs);
    expect(nodeOf(updated.outputs)).toMatchObject({ stepsDone: 0, stepsSkipped: 0 });
    expect(writesSince(before.log)).toEqual([]);
    expect(disks()).toEqual(before.disks);
    state = { ...state!, inputs };
  });

  it("a new disk that matches the selector: check shows it added, update extends the volume group", async () => {
    // The agent is confined to our devices (--devices); a hot-plugged disk means a restart with it.
    const L5 = scratch.loop();
    devices.push(L5);
    await restartAgent();
    const { inputs } = await host!.check(state!.inputs, program());
    const plan = summaryOf(inputs);
    expect(plan).toMatchObject({ claimed: [], extended: [`${L5} → ${VG}`], removed: [], wiped: [] });
    expect(plan.actions.map((a) => a.split(":")[0])).toEqual([
      `pvcreate ${L5}`,
      `vgextend ${L5}`,
      `pvchange ${L5}`,
    ]);
    expect((await host!.diff(state!.id, state!.outputs, inputs, state!.inputs)).changes).toBe("some");
    const updated = await host!.update(state!.id, state!.outputs, inputs, state!.inputs);
    expect(nodeOf(updated.outputs)).toMatchObject({ planHash: plan.hash, stepsDone: 3, stepsSkipped: 0 });
    expect(membersOf(devices, VG)).toEqual([L1, L2, L4, L5].sort());
    expect(vgs(devices)[0]!.pv_count).toBe("4");
    state = { ...state!, inputs, outputs: updated.outputs };
  });
});

describe("pulumi refresh after a change made by hand", () => {
  it("read reports the drift; the next check plans the repair and update makes it", async () => {
    // Refresh once on a converged node, so that the drift below is all the next refresh shows.
    const clean = await host!.read(state!.id, state!.outputs, state!.inputs);
    expect(nodeOf(clean.outputs)).toMatchObject({ state: "Ready" });
    state = { ...state!, outputs: clean.outputs };

    lvm(devices, ["vgreduce", VG, L2]);
    lvm(devices, ["pvremove", L2]);
    expect(membersOf(devices, VG)).not.toContain(L2);

    const refreshed = await host!.read(state!.id, state!.outputs, state!.inputs);
    expect(refreshed.id).toBe(state!.id);
    // What `pulumi refresh` shows: the node and the group Degraded, the member gone, the repair to do.
    const shown = refreshDiff(state!.outputs, refreshed.outputs);
    const at = `nodes.${NODE}.volumeGroups.${VG}`;
    expect(shown).toEqual(
      expect.arrayContaining([
        `~ nodes.${NODE}.state: "Ready" => "Degraded"`,
        `~ ${at}.state: "Healthy" => "Degraded"`,
        // The agent compares the group with the claims of the plan it last applied (issue 11, item 6).
        `+ ${at}.message: "3 physical volume(s), but the approved plan ${String(nodeOf(state!.outputs).planHash)} claimed 4 (not a member now: ${L2}); 3 step(s) to do: pvcreate ${L2}; vgextend ${VG} ${L2}; pvchange --addtag pulumi-lvm.kname=${L2.slice(5)} ${L2}"`,
      ]),
    );
    expect(
      shown.filter((line) => !line.includes(`nodes.${NODE}.state:`) && !line.includes(`${at}.`)),
    ).toEqual([]);
    const vg = (nodeOf(refreshed.outputs).volumeGroups as Record<string, { members: string[] }>)[VG]!;
    expect(vg.members).toEqual([L1, L4, devices[4]!].sort());
    state = { ...state!, outputs: refreshed.outputs };

    const { inputs } = await host!.check(state!.inputs, program());
    expect(summaryOf(inputs).extended).toEqual([`${L2} → ${VG}`]);
    expect((await host!.diff(state!.id, state!.outputs, inputs, state!.inputs)).changes).toBe("some");
    const updated = await host!.update(state!.id, state!.outputs, inputs, state!.inputs);
    expect(nodeOf(updated.outputs).stepsDone).toBeGreaterThan(0);
    expect(membersOf(devices, VG)).toEqual([L1, L2, L4, devices[4]!].sort());
    state = { ...state!, inputs, outputs: updated.outputs };
  });
});

describe("pulumi destroy", () => {
  it("deletionPolicy Retain (the default): nothing changes on any disk, the agent is not even asked", async () => {
    const before = { log: logLength(), disks: disks() };
    await host!.delete(state!.id, state!.outputs, state!.inputs);
    expect(commandLog(scratch.path("commands.jsonl")).slice(before.log)).toEqual([]);
    expect(disks()).toEqual(before.disks);
  });

  it("deletionPolicy Delete never removes a volume group holding logical volumes: a clear error, the group intact", async () => {
    // The program changes the policy: an update that touches no disk.
    const { inputs } = await host!.check(state!.inputs, program({ deletionPolicy: "Delete" }));
    expect(summaryOf(inputs).steps).toBe(0);
    expect((await host!.diff(state!.id, state!.outputs, inputs, state!.inputs)).changes).toBe("some");
    const updated = await host!.update(state!.id, state!.outputs, inputs, state!.inputs);
    state = { ...state!, inputs, outputs: updated.outputs };

    lvm(devices, ["lvcreate", "--driverloaded", "n", "-an", "-Zn", "-L", "8M", "-n", "data", VG]);
    const before = { log: logLength(), disks: disks() };
    const message = await expectFailure(host!.delete(state!.id, state!.outputs, state!.inputs));
    expect(message.split("\n")).toEqual([
      "tearing down node set lvm-system/edge (deletionPolicy Delete) failed; nothing was forced:",
      `node ${NODE}: VolumeGroupInUse: ${VG} still holds logical volumes that are not ours: ${VG}/data; remove them first, or tear down with force (destroys their data)`,
      expect.stringMatching(new RegExp(`^  logical volume ${VG}/data \\(.+, 8388608 bytes\\)$`)),
    ]);
    expect(writesSince(before.log)).toEqual([]);
    expect(disks()).toEqual(before.disks);
  });

  it("deletionPolicy Delete: the volume group and its PVs are removed", async () => {
    lvm(devices, ["lvremove", "--yes", `${VG}/data`]);
    await host!.delete(state!.id, state!.outputs, state!.inputs);
    expect(disks()).toEqual({ vgs: [], pvs: [] });
  });
});

describe("secrets", () => {
  it("the agent token is never in plain text in anything the provider returned, nor in the state", () => {
    expect(host!.received.length).toBeGreaterThan(10);
    expect(plainOccurrences(host!.received, token)).toEqual([]);
    expect(plainOccurrences(state, token)).toEqual([]);
    expect(host!.log).toContain("VolumeGroupInUse"); // the host logs failed deletes; never the token
    expect(host!.log).not.toContain(token);
  });
});
