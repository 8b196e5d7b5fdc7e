/**
 * An apply that succeeds on one node and fails on another, through the real dynamic-provider host
 * over gRPC (engine.ts): the host answers with ErrorResourceInitFailed carrying the resource's id,
 * its properties (the node that applied with its outcome, the failed one with its error) and one
 * reason per failed node, which is what the engine records. The next `pulumi up` updates only the
 * node that failed. Two real agents on loop devices (host tier, Thick), outcomes checked with the
 * test's own `vgs`/`pvs`.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  commandLog,
  isWrite,
  membersOf,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";
import {
  annotateSecrets,
  isSecret,
  plainOccurrences,
  ProviderError,
  ProviderHost,
  secret,
  serializeProvider,
  type Props,
} from "./engine";
import { PROGRAM_DIR, PROVIDER_TESTS_ROOT } from "./paths";

jest.setTimeout(180_000);

const VG = `prov-${randomBytes(3).toString("hex")}`;
const NODES = ["node-a", "node-b"] as const;
type Node = (typeof NODES)[number];
const ID = "lvm-system/edge";

/** One scratch per node: the same volume group name on both, each agent (and the test's lvm) sees only its own devices. */
const scratch = {} as Record<Node, Scratch>;
const agents = {} as Record<Node, AgentProcess>;
const tokens = {} as Record<Node, string>;
let host: ProviderHost | undefined;
let providerText: string;
/** node-b's second disk holds ext4 until the test wipes it between check and create. */
let B2: string;

beforeAll(async () => {
  requireHostTier();
  for (const node of NODES) {
    const s = (scratch[node] = new Scratch(`partial-${node}`, PROVIDER_TESTS_ROOT));
    s.loop();
    if (node === "node-b") {
      B2 = s.loop();
      execFileSync("mkfs.ext4", ["-q", "-F", B2], { stdio: "ignore" });
    }
    tokens[node] = writeTokenFile(s.path("tokens"), { op: { user: "pulumi", node } }).op!;
    agents[node] = await startAgent({
      node,
      devices: s.loops,
      ...s.agentFiles(),
      auth: { tokenFile: s.path("tokens") },
      // Two machines' worth of lvm on one: see Scratch.machineLvmDir.
      extraArgs: ["--lvm-system-dir", s.machineLvmDir()],
    });
  }
  providerText = await serializeProvider();
  host = await ProviderHost.start(PROGRAM_DIR);
});

afterAll(async () => {
  await host?.stop();
  for (const agent of Object.values(agents)) await agent.stop();
  for (const s of Object.values(scratch)) s.cleanup();
});

function program(): Props {
  return {
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec: {
      volumeGroups: [
        {
          name: VG,
          minDeviceSize: "64Mi",
          deviceSelector: {
            deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }],
          },
        },
      ],
      deviceClasses: [{ name: `${VG}-thick`, strategy: "Thick", volumeGroup: VG, default: true }],
    },
    agents: Object.fromEntries(
      NODES.map((node) => [node, { url: agents[node].url, token: secret(tokens[node]) }]),
    ),
    __provider: providerText,
  };
}

const loops = (node: Node) => scratch[node].loops;
const plansOf = (inputs: Props) => inputs.plans as Record<Node, { hash: string; steps: number }>;
const nodesOf = (outputs: Props) => outputs.nodes as Record<Node, Props>;
const requests = (node: Node) => agents[node].logs.filter((e) => e.msg === "request");

let state: { id: string; inputs: Props; outputs: Props } | undefined;

it("create: node-b's disks changed after check → init failure recording node-a's outcome and node-b's error", async () => {
  const { inputs, failures } = await host!.check({}, program());
  expect(failures).toEqual([]);
  execFileSync("wipefs", ["--all", "--quiet", B2]); // node-b's plan is now stale

  const error = await host!.create(inputs).then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(ProviderError);
  const { message, initFailure } = error as ProviderError;
  const planB = plansOf(inputs)["node-b"];
  const reason = expect.stringMatching(
    new RegExp(
      `^node node-b: PlanChanged: .*\\n  nothing was done on node node-b: its disks changed after the plan \\(${planB.hash}\\) was reviewed`,
    ),
  );
  expect(message.split("\n")[0]).toBe(`applying node set ${ID} failed:`);
  expect(message.split("\n").at(-1)).toBe("applied: node-a");
  expect(initFailure).toEqual({ id: ID, properties: expect.any(Object), reasons: [reason] });
  const properties = initFailure!.properties;
  expect(nodesOf(properties)).toEqual({
    "node-a": {
      selected: true,
      planHash: plansOf(inputs)["node-a"].hash,
      stepsDone: plansOf(inputs)["node-a"].steps,
      stepsSkipped: 0,
      operation: expect.stringMatching(/.+/),
      blocked: [],
    },
    "node-b": { selected: true, planHash: "", stepsDone: 0, stepsSkipped: 0, blocked: [], error: reason },
  });
  // What the engine needs to call the provider again, and the tokens sealed as everywhere else.
  expect(properties.__provider).toBe(providerText);
  for (const node of NODES)
    expect((properties.agents as Record<Node, Props>)[node].token).toEqual(secret(tokens[node]));
  // On disk: node-a has its group, node-b is untouched.
  expect(vgs(loops("node-a"))).toEqual([expect.objectContaining({ vg_name: VG, pv_count: "1" })]);
  expect(vgs(loops("node-b"))).toEqual([]);
  expect(commandLog(scratch["node-b"].path("commands.jsonl")).filter(isWrite)).toEqual([]);
  // The engine records the resource with these properties.
  state = { id: initFailure!.id, inputs, outputs: annotateSecrets(properties, inputs) };
});

it("the next pulumi up updates only node-b; node-a is not called", async () => {
  const { inputs, failures } = await host!.check(state!.inputs, program());
  expect(failures).toEqual([]);
  expect(plansOf(inputs)["node-a"].steps).toBe(0);
  expect(plansOf(inputs)["node-b"].steps).toBeGreaterThan(0);
  expect((await host!.diff(state!.id, state!.outputs, inputs, state!.inputs)).changes).toBe("some");

  const before = { a: requests("node-a").length, b: requests("node-b").length };
  const updated = await host!.update(state!.id, state!.outputs, inputs, state!.inputs);
  expect(requests("node-a").slice(before.a)).toEqual([]);
  expect(
    requests("node-b")
      .slice(before.b)
      .map((e) => `${e.method} ${e.path} ${e.status}`),
  ).toEqual(["POST /v1/apply 200"]);
  expect(nodesOf(updated.outputs)["node-b"]).toEqual({
    selected: true,
    planHash: plansOf(inputs)["node-b"].hash,
    stepsDone: plansOf(inputs)["node-b"].steps,
    stepsSkipped: 0,
    operation: expect.stringMatching(/.+/),
    blocked: [],
  });
  expect(membersOf(loops("node-b"), VG)).toEqual([...loops("node-b")].sort());
  expect(vgs(loops("node-a"))).toEqual([expect.objectContaining({ vg_name: VG, pv_count: "1" })]);
  state = { ...state!, inputs, outputs: updated.outputs };
});

it("no token is in plain text in anything the host returned, including the init failure", () => {
  expect(host!.received.some((r) => typeof r === "object" && r !== null && "reasons" in r)).toBe(true);
  for (const token of Object.values(tokens)) {
    expect(plainOccurrences(host!.received, token)).toEqual([]);
    expect(plainOccurrences(state, token)).toEqual([]);
  }
  expect(isSecret((state!.outputs.agents as Record<Node, Props>)["node-a"].token)).toBe(true);
});
