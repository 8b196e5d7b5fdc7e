import type { Transport } from "../../../src/kube/http";
import {
  AGENT_TOKEN_SECONDS,
  DEFAULT_READY_WAIT,
  findClusterAgents,
  READY_WAIT_ENV,
  readyWaitFrom,
  type ReadyWait,
} from "./cluster-agents";

const KUBECONFIG = `current-context: c
contexts: [{name: c, context: {cluster: k, user: u}}]
clusters: [{name: k, cluster: {server: "https://api:6443", certificate-authority-data: ${Buffer.from("CA").toString("base64")}}}]
users: [{name: u, user: {token: user-token}}]
`;
const AGENT_TOKEN = "agent-token-from-tokenrequest";

function node(name: string, zone: string) {
  return { metadata: { name, labels: { zone } } };
}
function agentPod(name: string, nodeName: string, ready = "True") {
  return {
    metadata: { name },
    spec: { nodeName, containers: [{ name: "agent", ports: [{ name: "http", containerPort: 8080 }] }] },
    status: { phase: "Running", podIP: "10.1.0.1", conditions: [{ type: "Ready", status: ready }] },
  };
}

/** A fake API server: answers by "METHOD path?query"; records every request. */
function apiServer(answers: Record<string, { status: number; body: unknown }>) {
  const calls: Array<{ call: string; headers: Record<string, string>; body?: unknown }> = [];
  const transport: Transport = async (request) => {
    const call = `${request.method} ${request.url.pathname}${request.url.search}`;
    calls.push({
      call,
      headers: { ...request.headers },
      ...(request.body ? { body: JSON.parse(request.body) } : {}),
    });
    const answer = answers[call];
    if (!answer) throw new Error(`unexpected ${call}`);
    return { status: answer.status, body: JSON.stringify(answer.body) };
  };
  return { transport, calls };
}

const PODS = "GET /api/v1/namespaces/lvm/pods?labelSelector=app.kubernetes.io%2Fname%3Dpulumi-lvm-agent";
const TOKEN = "POST /api/v1/namespaces/lvm/serviceaccounts/lvm-provisioner/token";
const cluster = {
  kubeconfig: KUBECONFIG,
  serviceAccount: "lvm-provisioner",
  nodeSelector: {
    nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In" as const, values: ["edge"] }] }],
  },
};
const ok = (body: unknown) => ({ status: 200, body });
/** No waiting for pods that are not Ready: the answer of the first listing. */
const NO_WAIT: ReadyWait = { timeoutMs: 0, pollMs: 2_000 };

describe("findClusterAgents", () => {
  test("the nodes the selector picks, their ready agent pods behind the pod proxy, a token per node for its audience", async () => {
    const { transport, calls } = apiServer({
      "GET /api/v1/nodes": ok({
        items: [node("n2", "edge"), node("n1", "edge"), node("n3", "core"), node("n4", "edge")],
      }),
      [PODS]: ok({
        items: [
          agentPod("p1", "n1"),
          agentPod("p2", "n2"),
          agentPod("p3", "n3"),
          agentPod("p4", "n4", "False"),
        ],
      }),
      [TOKEN]: { status: 201, body: { status: { token: AGENT_TOKEN } } },
    });
    const located = await findClusterAgents(transport, "lvm", cluster, undefined, NO_WAIT);
    expect(located.endpoints.map(({ proxy, ...ep }) => ({ ...ep, pod: proxy?.pod }))).toEqual([
      {
        node: "n1",
        url: "https://api:6443/api/v1/namespaces/lvm/pods/http:p1:8080/proxy/",
        token: AGENT_TOKEN,
        pod: "p1",
      },
      {
        node: "n2",
        url: "https://api:6443/api/v1/namespaces/lvm/pods/http:p2:8080/proxy/",
        token: AGENT_TOKEN,
        pod: "p2",
      },
    ]);
    expect(located.endpoints[0]!.proxy).toMatchObject({
      namespace: "lvm",
      apiServer: { server: "https://api:6443" },
    });
    expect(located.endpoints[0]!.proxy?.apiServer.ca?.()).toBe("CA");
    expect(located.missing).toEqual([
      {
        node: "n4",
        message: "node n4: no agent pod on it is Running and Ready: lvm/p4 (phase Running, Ready False)",
      },
    ]);
    expect(calls.map((c) => c.call)).toEqual(["GET /api/v1/nodes", PODS, TOKEN, TOKEN]);
    expect(calls.every((c) => c.headers.authorization === "Bearer user-token")).toBe(true);
    // Each node's token is bound to that node's audience only: n1's agent cannot replay it at n2's.
    expect(calls.slice(2).map((c) => c.body)).toEqual(
      ["n1", "n2"].map((n) => ({
        apiVersion: "authentication.k8s.io/v1",
        kind: "TokenRequest",
        spec: { audiences: [`pulumi-lvm-agent/${n}`], expirationSeconds: AGENT_TOKEN_SECONDS },
      })),
    );
  });

  test("given nodes (apply, delete): no node listing; no token when no agent can be called", async () => {
    const { transport, calls } = apiServer({ [PODS]: ok({ items: [] }) });
    expect(await findClusterAgents(transport, "lvm", cluster, ["n9"])).toEqual({
      endpoints: [],
      missing: [
        {
          node: "n9",
          message:
            "node n9: no agent pod (app.kubernetes.io/name=pulumi-lvm-agent in namespace lvm) runs on it; check the agent DaemonSet's nodeSelector and tolerations",
        },
      ],
    });
    expect(calls.map((c) => c.call)).toEqual([PODS]);
  });

  test("no node selected: no pods listed, no token requested", async () => {
    const { transport, calls } = apiServer({ "GET /api/v1/nodes": ok({ items: [node("n3", "core")] }) });
    expect(await findClusterAgents(transport, "lvm", cluster)).toEqual({ endpoints: [], missing: [] });
    expect(calls).toHaveLength(1);
  });

  test.each([
    [
      "the nodes",
      { "GET /api/v1/nodes": { status: 403, body: { kind: "Status", message: "nodes is forbidden" } } },
      "cannot list the nodes: GET /api/v1/nodes: HTTP 403: nodes is forbidden",
    ],
    [
      "the token",
      {
        "GET /api/v1/nodes": ok({ items: [node("n1", "edge")] }),
        [PODS]: ok({ items: [agentPod("p1", "n1")] }),
        [TOKEN]: {
          status: 403,
          body: { kind: "Status", message: 'serviceaccounts "lvm-provisioner" is forbidden' },
        },
      },
      `cannot get a token for service account lvm/lvm-provisioner (TokenRequest, audience pulumi-lvm-agent/n1): ${TOKEN}: HTTP 403: serviceaccounts "lvm-provisioner" is forbidden`,
    ],
  ])(
    "a refused call (%s) is an error with the status and the API server's message",
    async (_what, answers, message) => {
      const { transport } = apiServer(answers);
      await expect(findClusterAgents(transport, "lvm", cluster)).rejects.toThrow(message);
    },
  );

  test("a malformed TokenRequest answer is named without quoting it", async () => {
    const { transport } = apiServer({
      "GET /api/v1/nodes": ok({ items: [node("n1", "edge")] }),
      [PODS]: ok({ items: [agentPod("p1", "n1")] }),
      [TOKEN]: { status: 201, body: { status: { token: 42, leaked: AGENT_TOKEN } } },
    });
    const error = (await findClusterAgents(transport, "lvm", cluster).catch((e: Error) => e)) as Error;
    expect(error.message).toBe(
      "the API server's answer for a token for service account lvm/lvm-provisioner (TokenRequest, audience pulumi-lvm-agent/n1) is not what Kubernetes sends: status.token",
    );
  });

  test("a kubeconfig the reader cannot use is an error naming the field", async () => {
    const { transport } = apiServer({});
    await expect(
      findClusterAgents(transport, "lvm", {
        ...cluster,
        kubeconfig: KUBECONFIG.replace("{token: user-token}", "{auth-provider: {name: oidc}}"),
      }),
    ).rejects.toThrow(
      "kubeconfig cluster.kubeconfig: users[u].user.auth-provider: auth-provider plugins are not supported",
    );
  });

  describe("agent pods that exist but are not Ready yet", () => {
    /** A fake clock whose sleep advances it; the pod listings answer in turn (the last one repeats). */
    function waiting(podLists: unknown[][], timeoutMs = 10_000) {
      let t = 0;
      const slept: number[] = [];
      const wait: ReadyWait = {
        timeoutMs,
        pollMs: 2_000,
        now: () => t,
        sleep: async (ms) => {
          slept.push(ms);
          t += ms;
        },
      };
      let listing = 0;
      const transport: Transport = async (request) => {
        const call = `${request.method} ${request.url.pathname}${request.url.search}`;
        if (call === PODS)
          return {
            status: 200,
            body: JSON.stringify({ items: podLists[Math.min(listing++, podLists.length - 1)] }),
          };
        if (call === TOKEN) return { status: 201, body: JSON.stringify({ status: { token: AGENT_TOKEN } }) };
        throw new Error(`unexpected ${call}`);
      };
      return { wait, transport, slept, listings: () => listing };
    }

    test("are listed again until Ready: the node is called, not reported missing", async () => {
      const w = waiting([
        [agentPod("p1", "n1"), agentPod("p2", "n2", "False")],
        [agentPod("p1", "n1"), agentPod("p2", "n2", "False")],
        [agentPod("p1", "n1"), agentPod("p2", "n2")],
      ]);
      const located = await findClusterAgents(w.transport, "lvm", cluster, ["n1", "n2"], w.wait);
      expect(located.missing).toEqual([]);
      expect(located.endpoints.map((e) => e.node)).toEqual(["n1", "n2"]);
      expect(w.slept).toEqual([2_000, 2_000]);
      expect(w.listings()).toBe(3);
    });

    test("are reported missing, with the pod's state, once the wait is over", async () => {
      const w = waiting([[agentPod("p1", "n1"), agentPod("p2", "n2", "False")]], 5_000);
      const located = await findClusterAgents(w.transport, "lvm", cluster, ["n1", "n2"], w.wait);
      expect(located.endpoints.map((e) => e.node)).toEqual(["n1"]);
      expect(located.missing).toEqual([
        {
          node: "n2",
          message: "node n2: no agent pod on it is Running and Ready: lvm/p2 (phase Running, Ready False)",
        },
      ]);
      expect(w.slept).toEqual([2_000, 2_000]); // at 4 s the next look would pass 5 s
    });

    test("a node with no agent pod at all is not waited for", async () => {
      const w = waiting([[agentPod("p1", "n1")]]);
      const located = await findClusterAgents(w.transport, "lvm", cluster, ["n1", "n9"], w.wait);
      expect(located.missing.map((m) => m.node)).toEqual(["n9"]);
      expect(w.slept).toEqual([]);
    });
  });
});

describe("readyWaitFrom", () => {
  test.each([
    [undefined, DEFAULT_READY_WAIT.timeoutMs],
    ["", DEFAULT_READY_WAIT.timeoutMs],
    ["0", 0],
    [" 30 ", 30_000],
  ])("%j → %d ms", (value, ms) => {
    const env = value === undefined ? {} : { [READY_WAIT_ENV]: value };
    expect(readyWaitFrom(env)).toEqual({ timeoutMs: ms, pollMs: DEFAULT_READY_WAIT.pollMs });
  });

  test.each(["-1", "1.5", "soon"])("%j is refused, naming the variable", (value) => {
    expect(() => readyWaitFrom({ [READY_WAIT_ENV]: value })).toThrow(
      `${READY_WAIT_ENV}=${JSON.stringify(value)}: must be a whole number, 0 or more (seconds to wait for agent pods that are not Ready yet)`,
    );
  });
});
