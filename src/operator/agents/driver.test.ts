import type { LVMNodeSpec } from "../../api";
import { AgentCallError, type AgentClient, type AgentEndpoint } from "../../agent-client/agent-client";
import { ManualClock } from "../../../test/support/kube/manual-clock";
import { AgentDriver, type AgentCall, type AgentCallResult, type AgentTls } from "./driver";

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
      calls.push({
        call: name,
        url: ep.url,
        token: ep.token,
        ...(typeof planHash === "string" ? { planHash } : {}),
      });
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
  tls: AgentTls = "plain-http",
  token: (node: string) => Promise<string> = async () => "agent-token",
) {
  const recorded: Array<[AgentCall, AgentCallResult]> = [];
  const d = new AgentDriver({
    client,
    pods: () => pods,
    namespace: "lvm-system",
    token,
    tls,
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

describe("how an agent is called", () => {
  test("HTTPS by default, whatever the pod says: the agents' CA and server name, the node's own token", async () => {
    const seen: AgentEndpoint[] = [];
    const { client } = fakeClient({
      plan: (ep) => (seen.push(ep), plan()),
      status: (ep) => (seen.push(ep), { node: "n1", status: STATUS }),
    });
    const tls = { ca: async () => "CA PEM", serverName: "pulumi-lvm-agent" };
    const { d } = driver(client, undefined, tls, async (node) => `token-for-${node}`);
    expect(await d.sync({ node: "n1", namespace: "storage" }, SPEC)).toMatchObject({ kind: "synced" });
    expect(seen).toHaveLength(2);
    for (const ep of seen)
      expect(ep).toEqual({
        node: "n1",
        namespace: "storage",
        url: "https://10.0.0.1:8080/",
        token: "token-for-n1",
        ca: "CA PEM",
        serverName: "pulumi-lvm-agent",
      });
  });

  test("no CA, or no token: nothing is sent, the node is unavailable with the reason", async () => {
    const { client, calls } = fakeClient({});
    const noCa = driver(client, undefined, {
      ca: async () => {
        throw new Error("cannot read the agents' CA /ca.crt: ENOENT");
      },
      serverName: "pulumi-lvm-agent",
    }).d;
    expect(await noCa.sync("n1", SPEC)).toEqual({
      kind: "unavailable",
      message:
        "node n1: cannot call agent pod lvm-system/agent-a: cannot read the agents' CA /ca.crt: ENOENT",
    });
    const noToken = driver(client, undefined, "plain-http", async (node) => {
      throw new Error(`cannot get a token for node ${node}'s agent: HTTP 403`);
    }).d;
    expect(await noToken.teardown("n1", SPEC)).toMatchObject({
      kind: "unavailable",
      message: expect.stringContaining("cannot get a token for node n1's agent: HTTP 403"),
    });
    expect(calls).toEqual([]);
  });

  test("a call reads only its node's pods: the other 999 agent pods of a fleet are not parsed", async () => {
    let read = 0;
    // A pod whose status counts its reads: parsing it (zod) reads it; skipping it does not.
    const counted = (name: string, node: string, ip: string) => {
      const { status, ...rest } = pod(name, node, ip);
      return Object.defineProperty(rest, "status", { enumerable: true, get: () => (read++, status) });
    };
    const fleet = Array.from({ length: 1000 }, (_, i) =>
      counted(`agent-${i}`, `n${i}`, `10.0.${i >> 8}.${i & 255}`),
    );
    const { client, calls } = fakeClient({});
    const { d } = driver(client, fleet);
    expect(await d.sync("n1", SPEC)).toMatchObject({ kind: "synced", pod: "lvm-system/agent-1" });
    expect(calls.map((c) => c.url)).toEqual(["http://10.0.0.1:8080/", "http://10.0.0.1:8080/"]);
    // before: every pod of the namespace, on every call (1,000 here; N² over a fleet's reconcile)
    expect(read).toBeLessThanOrEqual(3);
    // and what is said about a node without a Ready pod is unchanged
    expect(await d.sync("n1000", SPEC)).toMatchObject({
      kind: "unavailable",
      message: expect.stringContaining("node n1000: no agent pod"),
    });
  });
});

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

describe("stopping: plan and status aborted, an apply sent is waited for", () => {
  /** A client whose calls record the signal they got; `during` runs inside the named call. */
  function stoppable(stop: AbortController, during: { call: keyof AgentClient; run: () => Promise<void> }) {
    const calls: Array<{ call: string; signal: AbortSignal | undefined }> = [];
    const make =
      (name: keyof AgentClient, answer: () => unknown) =>
      async (...args: unknown[]) => {
        const signal = (
          args.find((a) => a && typeof a === "object" && "signal" in a) as
            { signal?: AbortSignal } | undefined
        )?.signal;
        calls.push({ call: name, signal });
        if (during.call === name) await during.run();
        // As the real client: a call with an aborted signal fails with code Aborted.
        if (signal?.aborted)
          throw new AgentCallError("n1", 0, "Aborted", `node n1: ${name} to its agent was aborted`);
        return answer();
      };
    const client = {
      plan: make("plan", () => plan({ actions: [{}, {}] })),
      apply: make("apply", () => ({ steps: [{ outcome: "done" }, { outcome: "done" }] })),
      status: make("status", () => ({ node: "n1", status: STATUS })),
      teardown: make("teardown", () => ({ node: "n1", steps: [] })),
    } as unknown as AgentClient;
    return { client, calls };
  }
  const nothing = { call: "teardown" as const, run: async () => undefined };

  test("already stopping: nothing is called", async () => {
    const stop = new AbortController();
    stop.abort();
    const { client, calls } = stoppable(stop, nothing);
    const { d } = driver(client);
    expect(await d.sync("n1", SPEC, stop.signal)).toEqual({
      kind: "stopped",
      message: "node n1: not planned: the operator is stopping",
    });
    expect(await d.teardown("n1", SPEC, stop.signal)).toEqual({
      kind: "stopped",
      message: "node n1: teardown not started (agent pod lvm-system/agent-a): the operator is stopping",
    });
    expect(calls).toEqual([]);
  });

  test("a plan in flight is aborted: stopped, nothing applied, the call counted as aborted", async () => {
    const stop = new AbortController();
    const { client, calls } = stoppable(stop, { call: "plan", run: async () => stop.abort() });
    const { d, recorded } = driver(client);
    expect(await d.sync("n1", SPEC, stop.signal)).toEqual({
      kind: "stopped",
      message: "node n1: plan to its agent was aborted (pod lvm-system/agent-a): the operator is stopping",
    });
    expect(calls).toEqual([{ call: "plan", signal: stop.signal }]);
    expect(recorded).toEqual([["plan", "aborted"]]);
  });

  test("stopped after the plan: the apply is not started", async () => {
    const stop = new AbortController();
    // The plan answers just as the stop comes: not aborted, but no apply may start now.
    const { client, calls } = fakeClient({
      plan: () => {
        stop.abort();
        return plan({ actions: [{}, {}] });
      },
    });
    expect(await driver(client).d.sync("n1", SPEC, stop.signal)).toEqual({
      kind: "stopped",
      message:
        "node n1: 2 planned step(s) not applied (agent pod lvm-system/agent-a): the operator is stopping",
    });
    expect(calls.map((c) => c.call)).toEqual(["plan"]);
  });

  test("stopped during an apply: it runs to its answer, the status is read without a signal, synced", async () => {
    const stop = new AbortController();
    const { client, calls } = stoppable(stop, { call: "apply", run: async () => stop.abort() });
    const { d, recorded } = driver(client);
    expect(await d.sync("n1", SPEC, stop.signal)).toEqual({
      kind: "synced",
      pod: "lvm-system/agent-a",
      applied: 2,
      status: STATUS,
    });
    expect(calls).toEqual([
      { call: "plan", signal: stop.signal },
      { call: "apply", signal: undefined },
      { call: "status", signal: undefined },
    ]);
    expect(recorded).toEqual([
      ["plan", "ok"],
      ["apply", "ok"],
      ["status", "ok"],
    ]);
  });

  test("no apply: the status read is aborted too", async () => {
    const stop = new AbortController();
    const { client } = stoppable(stop, { call: "status", run: async () => stop.abort() });
    const converged = { ...client, plan: async () => plan() } as AgentClient;
    const { d } = driver(converged);
    expect(await d.sync("n1", SPEC, stop.signal)).toMatchObject({ kind: "stopped" });
  });

  test("a teardown sent is never given the signal", async () => {
    const stop = new AbortController();
    const { client, calls } = stoppable(stop, { call: "teardown", run: async () => stop.abort() });
    expect(await driver(client).d.teardown("n1", SPEC, stop.signal)).toEqual({
      kind: "tornDown",
      pod: "lvm-system/agent-a",
    });
    expect(calls).toEqual([{ call: "teardown", signal: undefined }]);
  });
});

describe("approvalPolicy: a plan that needs an approval is not applied without one naming its hash", () => {
  const wipe = plan({
    hash: "h-wipe",
    volumeGroups: [
      { name: "vg1", exists: true, claimed: [{ kname: "/dev/sdc", id: "wwn:1", member: false }] },
    ],
    actions: [
      {
        op: "wipefs",
        argv: ["wipefs", "--all", "/dev/sdc"],
        volumeGroup: "vg1",
        device: "/dev/sdc",
        reason: "erase",
        destructive: true,
        signatures: [{ type: "xfs", uuid: "5e1c-uuid", offset: "0x0" }],
      },
      {
        op: "pvcreate",
        argv: ["pvcreate", "/dev/sdc"],
        volumeGroup: "vg1",
        device: "/dev/sdc",
        reason: "pv",
      },
    ],
  });

  test("Destructive (the default): awaiting, the plan with the signature it erases; no apply", async () => {
    const { client, calls } = fakeClient({ plan: () => wipe });
    const outcome = await driver(client).d.sync("n1", SPEC);
    expect(calls.map((c) => c.call)).toEqual(["plan", "status"]);
    expect(outcome).toMatchObject({
      kind: "awaiting",
      waiting: {
        hash: "h-wipe",
        policy: "Destructive",
        held: 2,
        claims: ["vg1: /dev/sdc (wwn:1)"],
        steps: [
          { op: "wipefs", device: "/dev/sdc", erases: [{ type: "xfs", uuid: "5e1c-uuid", offset: "0x0" }] },
          { op: "pvcreate", command: "pvcreate /dev/sdc" },
        ],
      },
    });
  });

  test("a stale approval: awaiting, saying which was given", async () => {
    const { client, calls } = fakeClient({ plan: () => wipe });
    const outcome = await driver(client).d.sync("n1", SPEC, undefined, undefined, { approved: "h-old" });
    expect(calls.map((c) => c.call)).toEqual(["plan", "status"]);
    expect(outcome).toMatchObject({ kind: "awaiting", stale: "h-old", waiting: { hash: "h-wipe" } });
  });

  test("the plan's own hash: applied with it, and the approval reported as used", async () => {
    const { client, calls } = fakeClient({ plan: () => wipe });
    const outcome = await driver(client).d.sync("n1", SPEC, undefined, undefined, { approved: "h-wipe" });
    expect(calls.map((c) => [c.call, c.planHash])).toEqual([
      ["plan", undefined],
      ["apply", "h-wipe"],
      ["status", undefined],
    ]);
    expect(outcome).toMatchObject({ kind: "synced", approved: "h-wipe" });
  });

  test("Automatic: applied as before, no approval recorded", async () => {
    const { client, calls } = fakeClient({ plan: () => wipe });
    const spec = { ...SPEC, approvalPolicy: "Automatic" } as LVMNodeSpec;
    const outcome = await driver(client).d.sync("n1", spec);
    expect(calls.map((c) => c.call)).toEqual(["plan", "apply", "status"]);
    expect(outcome).toMatchObject({ kind: "synced" });
    expect(outcome).not.toHaveProperty("approved");
  });
});
