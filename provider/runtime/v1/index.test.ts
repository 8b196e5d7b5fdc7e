import { errorResponse } from "../../../src/agent-api/errors";
import { AgentCallError, errorFrom } from "../../../src/agent-client/agent-client";
import type { Transport } from "../../../src/kube/http";
import { createProvider, describeApplyFailure, diff, UNKNOWN } from "./index";
import { PartialApplyError } from "./partial-failure";
import type { PlanSummary } from "./plan-summary";

/** Asserts the code under test never talks to an agent. */
const noAgentCalls: Transport = async (request) => {
  throw new Error(`unexpected call to ${request.url}`);
};

const spec = {
  volumeGroups: [
    {
      name: "vg-data",
      deviceSelector: {
        deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "In", values: ["/dev/vdb"] }] }],
      },
    },
  ],
};

function plan(over: Partial<PlanSummary> = {}): PlanSummary {
  return {
    hash: "h1",
    selected: true,
    steps: 0,
    claimed: [],
    extended: [],
    removed: [],
    wiped: [],
    excluded: [],
    blocked: [],
    actions: [],
    ...over,
  };
}

function inputs(over: Record<string, unknown> = {}) {
  return {
    nodeSetName: "edge",
    namespace: "lvm-system",
    spec,
    agents: { "node-a": { url: "http://127.0.0.1:9443", token: "t" } },
    ...over,
  };
}

describe("diff", () => {
  test("no work: same inputs and every fresh plan empty", () => {
    expect(
      diff(inputs({ plans: { "node-a": plan({ hash: "old" }) } }), inputs({ plans: { "node-a": plan() } })),
    ).toEqual({
      changes: false,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  test.each([
    ["a node's fresh plan has steps", {}, { plans: { "node-a": plan({ steps: 3 }) } }],
    ["the spec changed", {}, { spec: { ...spec, deletionPolicy: "Delete" } }],
    ["a token was rotated", {}, { agents: { "node-a": { url: "http://127.0.0.1:9443", token: "t2" } } }],
    [
      "a node was added",
      {},
      {
        agents: {
          "node-a": { url: "http://127.0.0.1:9443", token: "t" },
          "node-b": { url: "http://127.0.0.2:9443", token: "t" },
        },
      },
    ],
    ["the node set was renamed", {}, { nodeSetName: "edge-2" }],
  ])("changes when %s, and never replaces", (_what, olds, news) => {
    expect(diff(inputs(olds), inputs(news))).toEqual({
      changes: true,
      replaces: [],
      deleteBeforeReplace: false,
    });
  });

  test("a plan with steps on an unselected node is no work", () => {
    expect(diff(inputs(), inputs({ plans: { "node-a": plan({ selected: false, steps: 2 }) } })).changes).toBe(
      false,
    );
  });

  test("unknown inputs (preview): unknown changes, still never a replacement", () => {
    expect(diff(inputs(), inputs({ agents: { "node-a": { url: "http://x", token: UNKNOWN } } }))).toEqual({
      replaces: [],
    });
  });
});

describe("provider methods that must not touch disks", () => {
  const provider = createProvider({ transport: noAgentCalls });

  test("check passes unknown inputs through without asking agents", async () => {
    const news = inputs({ agents: { "node-a": { url: "http://x", token: UNKNOWN } } });
    expect(await provider.check!({}, news)).toEqual({ inputs: news });
  });

  test("check reports malformed inputs as failures with property paths, without asking agents", async () => {
    const result = await provider.check!(
      {},
      inputs({ namespace: 7, agents: { "node-a": { url: "http://x" } } }),
    );
    expect(result.failures).toEqual([
      { property: "namespace", reason: "must be a string (got 7)" },
      { property: "agents.node-a.token", reason: "is required" },
    ]);
  });

  test("delete with deletionPolicy Retain (the default) does nothing on any node", async () => {
    await expect(
      provider.delete!("lvm-system/edge", inputs({ plans: { "node-a": plan() } })),
    ).resolves.toBeUndefined();
  });

  test("apply refuses a node without a reviewed plan, before any call", async () => {
    await expect(provider.create(inputs())).rejects.toThrow(
      "applying node set lvm-system/edge failed:\nnode node-a: no plan was made for it; run pulumi preview, then pulumi up",
    );
  });

  test("apply skips converged and unselected nodes", async () => {
    const result = await provider.create(
      inputs({
        agents: { "node-a": { url: "http://a", token: "t" }, "node-b": { url: "http://b", token: "t" } },
        plans: { "node-a": plan({ steps: 0 }), "node-b": plan({ selected: false, steps: 5, hash: "h2" }) },
      }),
    );
    expect(result.id).toBe("lvm-system/edge");
    expect(result.outs.nodes).toEqual({
      "node-a": { selected: true, planHash: "h1", stepsDone: 0, stepsSkipped: 0, blocked: [] },
      "node-b": { selected: false, planHash: "h2", stepsDone: 0, stepsSkipped: 0, blocked: [] },
    });
  });
});

describe("check at fleet size", () => {
  const nodes = Array.from({ length: 20 }, (_, i) => `node-${String(i).padStart(2, "0")}`);
  const fleet = Object.fromEntries(
    nodes.map((n, i) => [n, { url: `http://127.0.0.${i + 1}:9443`, token: "t" }]),
  );
  /** Agents answering a plan after a few milliseconds; even nodes have two steps, odd ones none. */
  function agents() {
    let inFlight = 0;
    let peak = 0;
    const transport: Transport = async (request) => {
      expect(`${request.method} ${request.url.pathname}`).toBe("POST /v1/plan");
      inFlight++;
      peak = Math.max(peak, inFlight);
      await new Promise((r) => setTimeout(r, 5));
      inFlight--;
      const node = nodes[Number(request.url.hostname.split(".")[3]) - 1]!;
      const steps = nodes.indexOf(node) % 2 === 0 ? 2 : 0;
      const actions = Array.from({ length: steps }, () => ({
        op: "pvcreate",
        argv: ["pvcreate", "/dev/vdb"],
        device: "/dev/vdb",
        reason: "r",
      }));
      return {
        status: 200,
        body: JSON.stringify({
          node,
          selected: true,
          volumeGroups: [],
          actions,
          blocked: [],
          lvmd: { "device-classes": [] },
          hash: `h-${node}`,
        }),
      };
    };
    return { transport, peak: () => peak };
  }

  test.each([1, 3, 8])("asks at most %p agents at a time, and plans every node", async (bound) => {
    const a = agents();
    const result = await createProvider({ transport: a.transport, agentConcurrency: bound }).check!(
      {},
      inputs({ agents: fleet }),
    );
    expect(result.failures).toBeUndefined();
    expect(Object.keys(result.inputs.plans as object)).toEqual(nodes);
    expect(a.peak()).toBe(bound);
  });

  test("the inputs carry the overview: a line per node with work, the converged nodes folded into one", async () => {
    const result = await createProvider({ transport: agents().transport, agentConcurrency: 4 }).check!(
      {},
      inputs({ agents: fleet, planOverview: ["stale"] }),
    );
    const odd = nodes.filter((_, i) => i % 2 === 1);
    expect(result.inputs.planOverview).toEqual([
      ...nodes.filter((_, i) => i % 2 === 0).map((n) => `${n}: 2 steps`),
      `10 nodes converged: ${odd.join(", ")}`,
    ]);
  });
});

describe("refresh (read)", () => {
  const status = {
    node: "node-a",
    status: {
      state: "Degraded",
      volumeGroups: [
        {
          name: "vg-data",
          state: "Degraded",
          message: "2 step(s) to do: pvcreate /dev/vdc; vgextend vg-data /dev/vdc",
          devices: { included: [{ kname: "/dev/vdd" }, { kname: "/dev/vdb" }] },
        },
      ],
      conditions: [],
    },
  };
  const agentSays: Transport = async (request) => {
    expect(`${request.method} ${request.url.pathname}`).toBe("GET /v1/status");
    expect(request.headers.authorization).toBe("Bearer t");
    return { status: 200, body: JSON.stringify(status) };
  };

  test("reports the node's and each volume group's state now, keeping what the last apply did", async () => {
    const before = {
      selected: true,
      planHash: "h1",
      stepsDone: 3,
      stepsSkipped: 0,
      operation: "op-1",
      blocked: [],
      state: "Ready",
      volumeGroups: { "vg-old": { state: "Healthy", members: ["/dev/vdb"] } },
      lastOperation: "apply op-1 succeeded",
    };
    const { id, props } = await createProvider({ transport: agentSays }).read!(
      "lvm-system/edge",
      inputs({ nodes: { "node-a": before } }),
    );
    expect(id).toBe("lvm-system/edge");
    // Nothing of the previous refresh survives (the agent reported no last operation this time).
    expect((props.nodes as Record<string, unknown>)["node-a"]).toEqual({
      selected: true,
      planHash: "h1",
      stepsDone: 3,
      stepsSkipped: 0,
      operation: "op-1",
      blocked: [],
      state: "Degraded",
      volumeGroups: {
        "vg-data": {
          state: "Degraded",
          members: ["/dev/vdb", "/dev/vdd"],
          message: "2 step(s) to do: pvcreate /dev/vdc; vgextend vg-data /dev/vdc",
        },
      },
    });
  });

  test("what it returns carries the tokens as secrets, as create does", async () => {
    const secretToken = {
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      value: "t",
    };
    const read = await createProvider({ transport: agentSays }).read!("lvm-system/edge", inputs());
    expect(read.props.agents).toEqual({ "node-a": { url: "http://127.0.0.1:9443", token: secretToken } });
    const created = await createProvider({ transport: noAgentCalls }).create(
      inputs({ plans: { "node-a": plan({ steps: 0 }) } }),
    );
    expect(created.outs.agents).toEqual({ "node-a": { url: "http://127.0.0.1:9443", token: secretToken } });
  });
});

describe("agent errors", () => {
  test("an agent error body (as the agent writes it) becomes a message naming the node and the details", () => {
    const body = errorResponse(
      "VolumeGroupInUse",
      'volume group "vg-data" holds logical volumes that are not ours',
      {
        volumes: [{ volumeGroup: "vg-data", name: "pvc-1234", attributes: "Vwi-aotz--", size: 1073741824 }],
      },
    );
    const error = errorFrom("node-a", 409, body, "POST /v1/teardown");
    expect(error).toMatchObject({ node: "node-a", status: 409, code: "VolumeGroupInUse" });
    expect(error.message).toBe(
      'node node-a: VolumeGroupInUse: volume group "vg-data" holds logical volumes that are not ours\n  logical volume vg-data/pvc-1234 (Vwi-aotz--, 1073741824 bytes)',
    );
  });

  test("a failed lvm command shows argv, exit code and stderr", () => {
    const body = errorResponse("CommandFailed", "step 2 (vgcreate) failed: vgcreate exited with 5", {
      command: {
        argv: ["vgcreate", "vg-data", "/dev/vdb"],
        exitCode: 5,
        stderr: "  Device /dev/vdb excluded by a filter.\n",
      },
    });
    expect(errorFrom("node-a", 500, body, "POST /v1/apply").message).toBe(
      [
        "node node-a: CommandFailed: step 2 (vgcreate) failed: vgcreate exited with 5",
        "  command: vgcreate vg-data /dev/vdb (exit code 5)",
        "      Device /dev/vdb excluded by a filter.",
      ].join("\n"),
    );
  });

  test("stderr the agent's message already quotes is not repeated", () => {
    const stderr = "  Can't open /dev/vdb exclusively.  Mounted filesystem?\n";
    const body = errorResponse(
      "CommandFailed",
      `step 1 (pvcreate) failed: pvcreate /dev/vdb exited 5: ${stderr.trim()}`,
      {
        command: { argv: ["pvcreate", "/dev/vdb"], exitCode: 5, stderr },
      },
    );
    expect(errorFrom("node-a", 500, body, "POST /v1/apply").message).toBe(
      [
        "node node-a: CommandFailed: step 1 (pvcreate) failed: pvcreate /dev/vdb exited 5: Can't open /dev/vdb exclusively.  Mounted filesystem?",
        "  command: pvcreate /dev/vdb (exit code 5)",
      ].join("\n"),
    );
  });

  test("field problems are listed with their paths", () => {
    const body = errorResponse("InvalidBody", "the body is invalid", {
      problems: [{ path: "spec.volumeGroups[0].name", message: "is required" }],
    });
    expect(errorFrom("node-a", 400, body, "POST /v1/plan").message).toBe(
      "node node-a: InvalidBody: the body is invalid\n  spec.volumeGroups[0].name: is required",
    );
  });

  test("a body that is not an agent error still names the node and the call", () => {
    expect(errorFrom("node-a", 502, "<html>bad gateway</html>", "POST /v1/apply").message).toBe(
      "node node-a: POST /v1/apply failed with HTTP 502",
    );
  });

  test("a changed plan (409 PlanChanged) says nothing was done and how to continue", () => {
    const e = new AgentCallError(
      "node-a",
      409,
      "PlanChanged",
      "node node-a: PlanChanged: the node changed since the plan was made",
    );
    expect(describeApplyFailure(e, plan({ hash: "abc" }))).toBe(
      "node node-a: PlanChanged: the node changed since the plan was made\n  nothing was done on node node-a: its disks changed after the plan (abc) was reviewed; run pulumi preview to review the new plan, then pulumi up",
    );
  });
});

describe("cluster mode (transport faked: the API server and the agents behind its pod proxy)", () => {
  const kubeconfig = `current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://api:6443"}}]
users: [{name: u, user: {token: user-token}}]
`;
  const clusterInputs = (over: Record<string, unknown> = {}) => {
    const { agents: _agents, ...rest } = inputs(over);
    return { ...rest, cluster: { kubeconfig, serviceAccount: "lvm-provisioner" } };
  };
  const pod = (name: string, nodeName: string) => ({
    metadata: { name },
    spec: { nodeName, containers: [{ name: "agent", ports: [{ name: "http", containerPort: 8080 }] }] },
    status: { phase: "Running", podIP: "10.1.0.1", conditions: [{ type: "Ready", status: "True" }] },
  });
  const operation = (node: string) => ({
    operation: `op-${node}`,
    kind: "apply",
    node,
    approvedHash: "h2",
    planHash: "h2",
    steps: [
      {
        index: 0,
        op: "pvcreate",
        argv: ["pvcreate", "/dev/vdb"],
        outcome: "done",
        reason: "r",
        durationMs: 1,
      },
    ],
    blocked: [],
  });
  /** The API server: pods and a token; each pod proxy answers as its agent (node-b's disks changed). */
  function fakeCluster(calls: string[]): Transport {
    return async (request) => {
      const call = `${request.method} ${request.url.pathname}`;
      calls.push(call);
      if (call === "GET /api/v1/namespaces/lvm-system/pods")
        return { status: 200, body: JSON.stringify({ items: [pod("pa", "node-a"), pod("pb", "node-b")] }) };
      if (call === "POST /api/v1/namespaces/lvm-system/serviceaccounts/lvm-provisioner/token")
        return { status: 201, body: JSON.stringify({ status: { token: "agent-token" } }) };
      expect(request.headers["x-pulumi-lvm-authorization"]).toBe("Bearer agent-token");
      if (call === "POST /api/v1/namespaces/lvm-system/pods/http:pa:8080/proxy/v1/apply")
        return { status: 200, body: JSON.stringify(operation("node-a")) };
      if (call === "POST /api/v1/namespaces/lvm-system/pods/http:pb:8080/proxy/v1/apply")
        return {
          status: 409,
          body: JSON.stringify(errorResponse("PlanChanged", "the node changed since the plan was made")),
        };
      throw new Error(`unexpected ${call}`);
    };
  }

  test("update: only planned nodes with steps are called, through the proxy; a failed node keeps its old outcome with the error", async () => {
    const calls: string[] = [];
    const provider = createProvider({ transport: fakeCluster(calls) });
    const before = {
      "node-a": {
        selected: true,
        planHash: "h1",
        stepsDone: 2,
        stepsSkipped: 0,
        operation: "op-0",
        blocked: [],
      },
      "node-b": {
        selected: true,
        planHash: "h1",
        stepsDone: 2,
        stepsSkipped: 0,
        operation: "op-0",
        blocked: [],
      },
      "node-c": { selected: true, planHash: "h1", stepsDone: 1, stepsSkipped: 0, blocked: [] },
    };
    const news = clusterInputs({
      plans: {
        "node-a": plan({ hash: "h2", steps: 1 }),
        "node-b": plan({ hash: "h2", steps: 1 }),
        "node-c": plan(),
      },
    });
    const error = await provider.update!("lvm-system/edge", { ...news, nodes: before }, news).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(PartialApplyError);
    const { properties, reasons } = error as PartialApplyError;
    expect(reasons).toEqual([
      "node node-b: PlanChanged: the node changed since the plan was made\n  nothing was done on node node-b: its disks changed after the plan (h2) was reviewed; run pulumi preview to review the new plan, then pulumi up",
    ]);
    expect(properties.nodes).toEqual({
      "node-a": {
        selected: true,
        planHash: "h2",
        stepsDone: 1,
        stepsSkipped: 0,
        operation: "op-node-a",
        blocked: [],
      },
      "node-b": { ...before["node-b"], error: reasons[0] },
      "node-c": { selected: true, planHash: "h1", stepsDone: 0, stepsSkipped: 0, blocked: [] },
    });
    expect((properties.cluster as { kubeconfig: unknown }).kubeconfig).toEqual({
      "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270",
      value: kubeconfig,
    });
    // No node listing (apply works on the reviewed plans), a token per called node, node-c not called.
    expect(calls.sort()).toEqual([
      "GET /api/v1/namespaces/lvm-system/pods",
      "POST /api/v1/namespaces/lvm-system/pods/http:pa:8080/proxy/v1/apply",
      "POST /api/v1/namespaces/lvm-system/pods/http:pb:8080/proxy/v1/apply",
      "POST /api/v1/namespaces/lvm-system/serviceaccounts/lvm-provisioner/token",
      "POST /api/v1/namespaces/lvm-system/serviceaccounts/lvm-provisioner/token",
    ]);
  });

  test("create where every called node fails: a plain error, nothing to record", async () => {
    const provider = createProvider({ transport: fakeCluster([]) });
    const error = await provider
      .create(clusterInputs({ plans: { "node-b": plan({ hash: "h2", steps: 1 }) } }))
      .catch((e: unknown) => e);
    expect(error).not.toBeInstanceOf(PartialApplyError);
    expect((error as Error).message).toMatch(
      /^applying node set lvm-system\/edge failed:\nnode node-b: PlanChanged/,
    );
  });

  test("check with unknown cluster settings (preview) passes them through without calling anything", async () => {
    const provider = createProvider({ transport: noAgentCalls });
    const news = { ...clusterInputs(), cluster: { kubeconfig: UNKNOWN, serviceAccount: "lvm-provisioner" } };
    expect(await provider.check!({}, news)).toEqual({ inputs: news });
  });
});
