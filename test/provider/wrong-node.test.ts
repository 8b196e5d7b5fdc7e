/**
 * The provider (sandbox mode, through the real dynamic-provider host, engine.ts) given an `agents`
 * entry that reaches ANOTHER node's agent: a URL pointing at the wrong agent, a token of one node
 * under another node's key. Every call (check, apply, refresh, delete) must fail naming both nodes
 * and touch nothing (issue 12, item 2). Two real agents on loop devices, static token files with
 * one token per node.
 *
 *   npx jest test/provider/wrong-node --selectProjects integration
 */
import { randomBytes } from "node:crypto";
import {
  commandLog,
  isWrite,
  membersOf,
  requireHostTier,
  Scratch,
  startAgent,
  writeTokenFile,
  type AgentProcess,
} from "../agent/harness";
import { ProviderHost, secret, serializeProvider, type Props } from "./engine";
import { PROGRAM_DIR, PROVIDER_TESTS_ROOT } from "./paths";

jest.setTimeout(180_000);

const VG = `prov-${randomBytes(3).toString("hex")}`;
const NODES = ["p1", "p2"] as const;
type Node = (typeof NODES)[number];

const scratch = {} as Record<Node, Scratch>;
const agents = {} as Record<Node, AgentProcess>;
const tokens = {} as Record<Node, string>;
let host: ProviderHost | undefined;
let providerText: string;

beforeAll(async () => {
  requireHostTier();
  for (const node of NODES) {
    const s = (scratch[node] = new Scratch(`wrong-${node}`, PROVIDER_TESTS_ROOT));
    s.loop();
    tokens[node] = writeTokenFile(s.path("tokens"), { op: { user: "pulumi", node } }).op!;
    agents[node] = await startAgent({
      node,
      devices: s.loops,
      ...s.agentFiles(),
      auth: { tokenFile: s.path("tokens") },
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

/** The program: `agents` maps node names (keys) to an agent's URL and token. */
function program(entries: Record<string, { url: string; token: string }>, deletionPolicy?: "Delete"): Props {
  return {
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec: {
      ...(deletionPolicy ? { deletionPolicy } : {}),
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
      Object.entries(entries).map(([k, v]) => [k, { url: v.url, token: secret(v.token) }]),
    ),
    __provider: providerText,
  };
}

const entry = (node: Node, token: Node = node) => ({ url: agents[node].url, token: tokens[token] });
const writes = (node: Node) => commandLog(scratch[node].path("commands.jsonl")).filter(isWrite);
const rejection = (p: Promise<unknown>) =>
  p.then(
    () => undefined,
    (e: Error) => e,
  );

test("check: p1's entry pointing at p2's agent fails naming both nodes; nothing planned for p1", async () => {
  const { inputs, failures } = await host!.check({}, program({ p1: entry("p2") }));
  expect(failures).toEqual([
    {
      property: "agents.p1",
      reason: expect.stringMatching(
        /^node p1: WrongNode: this is the agent of node p2; the call is for node p1/,
      ),
    },
  ]);
  expect(inputs.plans).toEqual({});
  expect(writes("p2")).toEqual([]);
});

test("check: a token scoped to p1, under key p2 with p1's URL, fails naming both nodes", async () => {
  const { failures } = await host!.check({}, program({ p2: entry("p1") }));
  expect(failures).toEqual([
    {
      property: "agents.p2",
      reason: expect.stringMatching(
        /^node p2: WrongNode: this is the agent of node p1; the call is for node p2/,
      ),
    },
  ]);
  expect(writes("p1")).toEqual([]);
});

test("apply: p1's plan sent where p1's entry now reaches p2: refused naming both; p2 untouched", async () => {
  const { inputs, failures } = await host!.check({}, program({ p1: entry("p1") }));
  expect(failures).toEqual([]);
  const moved = { ...inputs, agents: program({ p1: entry("p2") }).agents };
  const error = await rejection(host!.create(moved));
  expect(String((error as Error)?.message)).toContain(
    "this is the agent of node p2; the call is for node p1",
  );
  expect(writes("p2")).toEqual([]);
  expect(writes("p1")).toEqual([]);
});

test("refresh and destroy (Delete) with q1's entry pointing at p2's agent: both fail naming both; p2's VG stays", async () => {
  // The other stack: p2's volume group, built through p2's own entry.
  const own = await host!.check({}, program({ p2: entry("p2") }, "Delete"));
  expect(own.failures).toEqual([]);
  const created = await host!.create(own.inputs);
  expect(membersOf(scratch.p2.loops, VG)).toHaveLength(1);
  // This stack: node q1's entry points at p2 by mistake; its state says q1 was applied.
  const mistaken = program({ q1: entry("p2") }, "Delete");
  const state = {
    ...created.outputs,
    agents: mistaken.agents,
    plans: { q1: (own.inputs.plans as Record<string, unknown>).p2 },
    nodes: { q1: (created.outputs.nodes as Record<string, unknown>).p2 },
  };
  const inputs = { ...own.inputs, agents: mistaken.agents, plans: state.plans };
  const writesBefore = writes("p2").length;

  const refresh = await rejection(host!.read(created.id, state, inputs));
  expect(String((refresh as Error)?.message)).toContain(
    "node q1: WrongNode: this is the agent of node p2; the call is for node q1",
  );
  const destroy = await rejection(host!.delete(created.id, state, inputs));
  expect(String((destroy as Error)?.message)).toContain(
    "node q1: WrongNode: this is the agent of node p2; the call is for node q1",
  );
  expect(membersOf(scratch.p2.loops, VG)).toHaveLength(1);
  expect(writes("p2").slice(writesBefore)).toEqual([]);
});
