/**
 * A partial apply through the real engine: `pulumi up` of one NodeSetDisks over two nodes (two real
 * agents, each on its own loop devices and with its own token), where node-b's apply fails after its
 * plan succeeded. How, deterministically: the test holds an exclusive open (O_EXCL) on one of
 * node-b's claimed loop devices during the up. Discovery and planning only read (non-exclusive
 * opens), so the check passes; node-b's `pvcreate` of that device then fails ("Can't open ...
 * exclusively"). node-a applies. The provider throws its PartialApplyError, the Node.js SDK's
 * dynamic-provider host turns it into ErrorResourceInitFailed, and the engine stores the resource
 * with node-a's outcome and node-b's error: that last part is what test/provider/partial-failure.test.ts
 * (the host over gRPC, no engine) cannot show. Then the device is released, and the next preview and
 * up do node-b's work only. Every outcome on disk is checked with the test's own `vgs`/`pvs`.
 */
import * as fs from "node:fs";
import { randomBytes } from "node:crypto";
import {
  commandLog,
  isWrite,
  membersOf,
  pvs,
  request,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";
import { PulumiWorkspace, requirePulumiBinaries, type Deployment, type StateResource } from "./cli";
import { Timings } from "../timings";

jest.setTimeout(600_000);

const NODES = ["node-a", "node-b"] as const;
type Node = (typeof NODES)[number];
/**
 * The same volume group name on both nodes. The two "nodes" share this machine, so each agent gets
 * a /dev of its own with only its devices (AgentOptions.ownMachine): the stand-in for two
 * machines. Without it, node-b's agent (rightly) refuses the name once node-a's
 * group exists (VolumeGroupNameTaken: its one unconfined command, the machine's VG names, sees it).
 */
const VG = `ppf-${randomBytes(3).toString("hex")}`;
const RESOURCE_TYPE = "pulumi-nodejs:dynamic/pulumi-lvm:NodeSetDisks";
const ROOT = "/var/tmp/pulumi-e2e-tests";
/** The key Pulumi marks a secret with, in the state and on the wire. */
const SECRET_SIG_KEY = "4dabf18193072939515e22adb298388d";

const scratch = {} as Record<Node, Scratch>;
const agents = {} as Record<Node, AgentProcess>;
const tokens = {} as Record<Node, string>;
let ws: PulumiWorkspace | undefined;
/** node-a: A1. node-b: B1, B2; B2 is the device the test holds open exclusively during the first up. */
let A1: string, B1: string, B2: string;
/** The test's exclusive open of B2, while it is held. */
let held: number | undefined;
const timings = new Timings();
const timed = <T>(name: string, f: () => T): T => timings.timed(name, f);

beforeAll(async () => {
  requirePulumiBinaries();
  requireHostTier();
  for (const node of NODES) {
    const s = (scratch[node] = new Scratch(`partial-${node}`, ROOT));
    s.loop();
    if (node === "node-b") s.loop();
    tokens[node] = writeTokenFile(s.path("tokens"), { op: { user: "pulumi", node } }).op!;
    agents[node] = await startAgent({
      node,
      devices: s.loops,
      ...s.agentFiles(),
      auth: { tokenFile: s.path("tokens") },
      ownMachine: true, // the nodes have a group of one name, as on separate machines
    });
  }
  [A1] = scratch["node-a"].loops as [string];
  [B1, B2] = scratch["node-b"].loops as [string, string];

  ws = new PulumiWorkspace("partial", randomBytes(12).toString("hex"), { root: ROOT });
  ws.init();
  ws.ok(["config", "set", "volumeGroup", VG]);
  [A1, B1, B2].forEach((dev, i) => ws!.ok(["config", "set", "--path", `devices[${i}]`, dev]));
  for (const node of NODES) {
    ws.ok(["config", "set", "--path", `agentUrls.${node}`, agents[node].url]);
    // From stdin, so no token is on a command line either.
    ws.ok(["config", "set", "--secret", "--path", `agentTokens.${node}`], { input: tokens[node] });
  }
});

afterAll(async () => {
  if (held !== undefined) fs.closeSync(held);
  for (const agent of Object.values(agents)) await agent.stop();
  for (const s of Object.values(scratch)) s.cleanup();
  ws?.cleanup();
  console.log(timings.table("engine partial failure, seconds"));
});

const loops = (node: Node) => scratch[node].loops;
const log = (node: Node) => commandLog(scratch[node].path("commands.jsonl"));
/** `POST /v1/apply <status>` for each apply request the node's agent has logged. */
const applyRequests = (node: Node) =>
  agents[node].logs
    .filter((e) => e.msg === "request" && e.path === "/v1/apply")
    .map((e) => `${e.method} ${e.path} ${e.status}`);

/**
 * Waits until each agent has logged everything it did before now. The test runs pulumi with
 * spawnSync, which blocks the event loop, so the agents' log lines are read only afterwards: a
 * request to /healthz marks the end (an agent logs requests in order, on one stderr).
 */
async function flushAgentLogs(): Promise<void> {
  for (const node of NODES) {
    const seen = new Set(agents[node].logs);
    // Connection: close, so no kept-alive socket goes stale while the next spawnSync blocks the loop.
    await request(agents[node].url, "GET", "/healthz", { headers: { connection: "close" } });
    await agents[node].waitForLog((e) => !seen.has(e) && e.msg === "request" && e.path === "/healthz");
  }
}
/** The lines of `text` that contain `needle`. */
const linesWith = (text: string, needle: string) => text.split("\n").filter((l) => l.includes(needle));

interface NodeState {
  selected: boolean;
  planHash: string;
  stepsDone: number;
  stepsSkipped: number;
  operation?: string;
  error?: string;
}
interface PlanState {
  hash: string;
  steps: number;
}

/** The NodeSetDisks in `pulumi stack export`, with the export's text. */
function exported(): { text: string; resource: StateResource & { initErrors?: string[] } } {
  const { text, deployment } = ws!.exportState();
  const resource = deployment.resources?.find((r) => r.type === RESOURCE_TYPE);
  if (!resource) throw new Error(`no ${RESOURCE_TYPE} in the stack's state:\n${text}`);
  return { text, resource };
}
const nodesOf = (r: StateResource) => r.outputs?.nodes as Record<Node, NodeState>;
const plansOf = (r: { inputs?: Record<string, unknown> }) => r.inputs?.plans as Record<Node, PlanState>;

describe("pulumi up: node-b's apply fails after its plan succeeded; node-a applies", () => {
  let up: { code: number | null; output: string };

  beforeAll(async () => {
    held = fs.openSync(B2, fs.constants.O_RDONLY | fs.constants.O_EXCL);
    try {
      up = timed("failing up", () => ws!.run(["up", "--yes"]));
    } finally {
      fs.closeSync(held);
      held = undefined;
    }
    await flushAgentLogs();
  });

  it("exits non-zero; its output names node-b, the device, the lvm command, its exit code and stderr", () => {
    expect(up.code).not.toBe(0);
    const failure = linesWith(up.output, "node node-b");
    expect(failure).toEqual(expect.arrayContaining([expect.stringContaining(`pvcreate`)]));
    const text = failure.join("\n");
    expect(text).toContain(B2);
    expect(up.output).toMatch(new RegExp(`Can't open ${B2} exclusively`));
    expect(text).toContain(
      `CommandFailed: step 2 (pvcreate) failed: pvcreate ${B2} exited 5: Can't open ${B2} exclusively`,
    );
    expect(up.output).toContain(`command: pvcreate ${B2} (exit code 5)`);
    // The engine reports the init failure's reasons: node-b's, and nothing for node-a.
    expect(up.output).toMatch(/NodeSetDisks disks \*\*creating failed\*\* error: 1 error occurred/);
    expect(linesWith(up.output, "node node-a")).toEqual([]);
    // Both nodes were asked to apply (the check passed on both): node-a succeeded, node-b failed.
    expect(applyRequests("node-a")).toEqual(["POST /v1/apply 200"]);
    expect(applyRequests("node-b")).toEqual([expect.stringMatching(/^POST \/v1\/apply 5\d\d$/)]);
  });

  it("the engine stored the resource with node-a's applied outcome and node-b's error", () => {
    const { resource } = exported();
    const nodes = nodesOf(resource);
    const plans = plansOf(resource);
    expect(plans["node-a"].steps).toBeGreaterThan(0);
    expect(nodes["node-a"]).toEqual({
      selected: true,
      planHash: plans["node-a"].hash,
      stepsDone: plans["node-a"].steps,
      stepsSkipped: 0,
      operation: expect.stringMatching(/.+/),
      blocked: [],
    });
    expect(nodes["node-b"]).toMatchObject({ stepsDone: 0, planHash: "" });
    expect(nodes["node-b"].error).toMatch(new RegExp(`^node node-b: .*pvcreate.*${B2}`, "s"));
    expect(nodes["node-b"].error).toContain(`Can't open ${B2} exclusively`);
    // The engine's own record that the create did not finish (ErrorResourceInitFailed's reasons).
    expect(resource.initErrors).toEqual([nodes["node-b"].error]);
  });

  it("on disk: node-a's volume group exists; node-b has no volume group, only the PVs its log says were created", () => {
    expect(vgs(loops("node-a"))).toEqual([expect.objectContaining({ vg_name: VG, pv_count: "1" })]);
    expect(membersOf(loops("node-a"), VG)).toEqual([A1]);
    expect(vgs(loops("node-b"))).toEqual([]);
    // node-b's writes, as its agent's command log has them: pvcreate of B2 failed (exit 5), and
    // nothing after it ran. Any pvcreate before it (B1, when the plan orders it first) is the
    // half-done part the next up has to finish.
    const writes = log("node-b").filter(isWrite);
    expect(writes.at(-1)).toMatchObject({ tool: "pvcreate", exitCode: 5 });
    expect(writes.at(-1)!.requested).toContain(B2);
    expect(writes.slice(0, -1).every((c) => c.tool === "pvcreate" && c.exitCode === 0)).toBe(true);
    const created = writes.slice(0, -1).flatMap((c) => c.requested.filter((a) => a.startsWith("/dev/")));
    expect(pvs(loops("node-b"))).toEqual(
      created.map((pv) => expect.objectContaining({ pv_name: pv, vg_name: "" })),
    );
  });
});

describe("after the device is released", () => {
  it("pulumi preview shows work for node-b only", () => {
    const preview = timed("preview", () => ws!.ok(["preview", "--diff", "--json"]));
    const steps = (
      JSON.parse(preview.stdout) as {
        steps: Array<{ op: string; newState?: { type: string; inputs?: Record<string, unknown> } }>;
      }
    ).steps;
    const step = steps.find((s) => s.newState?.type === RESOURCE_TYPE);
    expect(step?.op).toBe("update");
    const plans = plansOf(step!.newState!);
    expect(plans["node-a"].steps).toBe(0);
    expect(plans["node-b"].steps).toBeGreaterThan(0);
  });

  it("pulumi up applies on node-b only: no apply request and no write command on node-a; node-b's volume group is built", async () => {
    const before = {
      aLog: log("node-a").length,
      aApply: applyRequests("node-a").length,
      bApply: applyRequests("node-b").length,
    };
    const up = timed("second up", () => ws!.ok(["up", "--yes"]));
    await flushAgentLogs();
    expect(up.output).toMatch(/~ 1 updated/);
    expect(applyRequests("node-a").slice(before.aApply)).toEqual([]);
    expect(log("node-a").slice(before.aLog).filter(isWrite)).toEqual([]);
    expect(applyRequests("node-b").slice(before.bApply)).toEqual(["POST /v1/apply 200"]);
    expect(vgs(loops("node-b"))).toEqual([expect.objectContaining({ vg_name: VG, pv_count: "2" })]);
    expect(membersOf(loops("node-b"), VG)).toEqual([B1, B2].sort());
    expect(membersOf(loops("node-a"), VG)).toEqual([A1]);

    const { resource } = exported();
    expect(resource.initErrors ?? []).toEqual([]);
    const nodes = nodesOf(resource);
    expect(nodes["node-b"].error).toBeUndefined();
    expect(nodes["node-b"]).toMatchObject({
      planHash: plansOf(resource)["node-b"].hash,
      stepsDone: expect.any(Number),
    });
    expect(nodes["node-b"].stepsDone).toBeGreaterThan(0);
  });

  it("a third preview has nothing to do", () => {
    ws!.ok(["preview", "--expect-no-changes"]);
  });
});

describe("secrets", () => {
  it("neither token is in plain text in the state, the backend's or project's files, or any output", () => {
    const { text, resource } = exported();
    // The engine copies the whole project config into the default dynamic provider's state (inputs
    // and outputs): plain values as they are, which is why the tokens must be set with --secret.
    const provider = (JSON.parse(text) as { deployment: Deployment }).deployment.resources!.find(
      (r) => r.type === "pulumi:providers:pulumi-nodejs",
    );
    expect(provider?.inputs).toMatchObject({
      "pulumi-lvm-engine-e2e:volumeGroup": VG,
      "pulumi-lvm-engine-e2e:agentTokens": {
        [SECRET_SIG_KEY]: expect.any(String),
        ciphertext: expect.any(String),
      },
    });
    const files = [...PulumiWorkspace.filesUnder(ws!.backend), ...PulumiWorkspace.filesUnder(ws!.project)];
    expect(files.length).toBeGreaterThan(2);
    for (const node of NODES) {
      const token = tokens[node];
      expect(linesWith(text, token)).toEqual([]);
      expect(files.flatMap((f) => linesWith(f.text, token).map((l) => `${f.file}: ${l}`))).toEqual([]);
      expect(ws!.transcript.flatMap((t) => linesWith(t, token))).toEqual([]);
    }
    // They are there, encrypted: the check above can fail.
    expect(JSON.stringify(resource.inputs!.agents)).toContain(SECRET_SIG_KEY);
    const shown = ws!.run(["stack", "export", "--show-secrets"]).stdout;
    for (const node of NODES) expect(shown).toContain(tokens[node]);
  });
});
