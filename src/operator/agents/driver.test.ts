import type { LVMNodeSpec } from "../../api";
import {
  AgentCallError,
  type AgentClient,
  type AgentEndpoint,
} from "../../../provider/runtime/v1/agent-client";
import { ManualClock } from "../testing/manual-clock";
import { AgentDriver, type AgentCall, type AgentCallResult } from "./driver";

const SPEC = { volumeGroups: [{ name: "vg1" }] } as unknown as LVMNodeSpec;
const STATUS = { state: "Ready" as const, volumeGroups: [], conditions: [] };

function pod(name: string, node: string, ip: string, ready = true) {
  return {
    metadata: { name, namespace: "lvm-system", labels: { "app.kubernetes.io/name": "pulumi-lvm-agent" } },
    spec: { nodeName: node, containers: [{ name: "agent", ports: [{ name: "http", containerPort: 8080 }] }] },
    status: {
      phase: "Running",
      podIP: ip,
      conditions: [
        { type: "Ready", status: ready ? "True" : "False", reason: ready ? undefined : "ContainersNotReady" },
      ],
    },
  };
}

const plan = (over: Record<string, unknown> = {}) => ({
  node: "n1",
  selected: true,
  volumeGroups: [],
  actions: [] as unknown[],
  blocked: [] as unknown[],
  lvmd: { "device-classes": [] },
  hash: "h1",
  ...over,
});

/** A fake agent client recording every call with the endpoint it went to. */
function fakeClient(behaviour: Partial<Record<keyof AgentClient, (ep: AgentEndpoint) => unknown>>) {
  const calls: Array<{ call: string; url: string; token: string; planHash?: string }> = [];
  const make =
    (name: keyof AgentClient, fallback: () => unknown) =>
    async (ep: AgentEndpoint, _spec?: unknown, planHash?: string) => {
      calls.push({ call: name, url: ep.url, token: ep.token, ...(planHash ? { planHash } : {}) });
      return (behaviour[name] ?? fallback)(ep);
    };
  const client = {
    plan: make("plan", () => plan()),
    apply: make("apply", () => ({ steps: [{ outcome: "done" }, { outcome: "skipped" }] })),
    status: make("status", () => ({ node: "n1", status: STATUS })),
    teardown: make("teardown", () => ({ node: "n1", steps: [] })),
  } as unknown as AgentClient;
  return { client, calls };
}

function driver(
  client: AgentClient,
  pods: unknown[] = [pod("agent-a", "n1", "10.0.0.1"), pod("agent-b", "n2", "10.0.0.2")],
) {
  const recorded: Array<[AgentCall, AgentCallResult]> = [];
  const d = new AgentDriver({
    client,
    pods: () => pods,
    namespace: "lvm-system",
    token: async () => "agent-token",
    clock: new ManualClock(0),
    onCall: (call, result) => recorded.push([call, result]),
  });
  return { d, recorded };
}

const error =
  (status: number, code: string, details: Record<string, unknown> = {}) =>
  () => {
    throw new AgentCallError("n1", status, code, `node n1: ${code}: it says why`, details);
  };

describe("sync: the decision table", () => {
  test("converged: plan and status, no apply; only the node's own pod, at its pod IP", async () => {
    const { client, calls } = fakeClient({});
    const { d, recorded } = driver(client);
    expect(await d.sync("n1", SPEC)).toEqual({
      kind: "synced",
      pod: "lvm-system/agent-a",
      applied: 0,
      status: STATUS,
    });
    expect(calls).toEqual([
      { call: "plan", url: "http://10.0.0.1:8080/", token: "agent-token" },
      { call: "status", url: "http://10.0.0.1:8080/", token: "agent-token" },
    ]);
    expect(recorded).toEqual([
      ["plan", "ok"],
      ["status", "ok"],
    ]);
  });

  test("steps and nothing blocked: apply with that plan's hash, count the steps done", async () => {
    const { client, calls } = fakeClient({ plan: () => plan({ actions: [{}, {}], hash: "abc" }) });
    const { d } = driver(client);
    expect(await d.sync("n1", SPEC)).toMatchObject({ kind: "synced", applied: 1 });
    expect(calls.map((c) => [c.call, c.planHash])).toEqual([
      ["plan", undefined],
      ["apply", "abc"],
      ["status", undefined],
    ]);
  });

  test("blocked: no apply, the reasons reported", async () => {
    const { client, calls } = fakeClient({
      plan: () =>
        plan({ actions: [{}], blocked: [{ volumeGroup: "vg1", device: "/dev/sdc", reason: "has xfs" }] }),
    });
    const { d } = driver(client);
    expect(await d.sync("n1", SPEC)).toEqual({
      kind: "blocked",
      pod: "lvm-system/agent-a",
      blocked: ["vg1: /dev/sdc: has xfs"],
      status: STATUS,
    });
    expect(calls.map((c) => c.call)).toEqual(["plan", "status"]);
  });

  test("409 PlanChanged on apply: busy (requeue), never forced, no status read", async () => {
    const { client, calls } = fakeClient({
      plan: () => plan({ actions: [{}] }),
      apply: error(409, "PlanChanged"),
    });
    const { d, recorded } = driver(client);
    const outcome = await d.sync("n1", SPEC);
    expect(outcome).toEqual({
      kind: "busy",
      message:
        "POST /v1/apply to agent pod lvm-system/agent-a answered HTTP 409: node n1: PlanChanged: it says why",
    });
    expect(calls.map((c) => c.call)).toEqual(["plan", "apply"]);
    expect(recorded).toContainEqual(["apply", "conflict"]);
  });

  test("unreachable pod: unavailable, naming the pod", async () => {
    const { client } = fakeClient({ plan: error(0, "Unreachable") });
    const { d, recorded } = driver(client);
    expect(await d.sync("n1", SPEC)).toEqual({
      kind: "unavailable",
      message: "node n1: Unreachable: it says why (pod lvm-system/agent-a)",
    });
    expect(recorded).toEqual([["plan", "unreachable"]]);
  });

  test("no Ready pod on the node: unavailable with the pod state, nothing called", async () => {
    const { client, calls } = fakeClient({});
    const { d } = driver(client, [pod("agent-a", "n1", "10.0.0.1", false)]);
    const outcome = await d.sync("n1", SPEC);
    expect(outcome.kind).toBe("unavailable");
    expect((outcome as { message: string }).message).toMatch(
      /^node n1: no agent pod on it is Running and Ready: lvm-system\/agent-a \(phase Running, Ready False: ContainersNotReady\)/,
    );
    expect(calls).toEqual([]);
  });

  test("a failed apply: failed with the agent's message and its status when readable", async () => {
    const { client } = fakeClient({
      plan: () => plan({ actions: [{}] }),
      apply: error(500, "CommandFailed"),
    });
    const { d } = driver(client);
    expect(await d.sync("n1", SPEC)).toEqual({
      kind: "failed",
      message:
        "POST /v1/apply to agent pod lvm-system/agent-a answered HTTP 500: node n1: CommandFailed: it says why",
      status: STATUS,
    });
  });

  test("an agent answering for another node: nothing applied", async () => {
    const { client, calls } = fakeClient({ plan: () => plan({ node: "n2", actions: [{}] }) });
    const { d } = driver(client);
    expect(await d.sync("n1", SPEC)).toEqual({
      kind: "failed",
      message: "node n1: agent pod lvm-system/agent-a answers for node n2; nothing was applied",
    });
    expect(calls.map((c) => c.call)).toEqual(["plan"]);
  });

  test("pods without the agent labels are never called", async () => {
    const stranger = { ...pod("web", "n1", "10.0.0.9"), metadata: { name: "web", labels: { app: "web" } } };
    const { client, calls } = fakeClient({});
    const { d } = driver(client, [stranger]);
    expect((await d.sync("n1", SPEC)).kind).toBe("unavailable");
    expect(calls).toEqual([]);
  });
});

describe("teardown", () => {
  test("done", async () => {
    const { client } = fakeClient({});
    expect(await driver(client).d.teardown("n1", SPEC)).toEqual({
      kind: "tornDown",
      pod: "lvm-system/agent-a",
    });
  });

  test("refused while logical volumes exist: names them, never forces", async () => {
    const { client, calls } = fakeClient({
      teardown: error(409, "VolumeGroupInUse", {
        volumes: [{ volumeGroup: "vg1", name: "data", attributes: "-wi-a-----", size: 4 }],
      }),
    });
    const outcome = await driver(client).d.teardown("n1", SPEC);
    expect(outcome).toMatchObject({ kind: "refused", volumes: ["vg1/data"] });
    expect((outcome as { message: string }).message).toContain("logical volumes vg1/data remain");
    expect(calls).toHaveLength(1);
  });

  test("unreachable", async () => {
    const { client } = fakeClient({ teardown: error(0, "Unreachable") });
    expect((await driver(client).d.teardown("n1", SPEC)).kind).toBe("unavailable");
  });
});
