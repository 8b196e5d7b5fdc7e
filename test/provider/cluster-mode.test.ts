/**
 * NodeSetDisks in cluster mode, end to end against a REAL kube-apiserver + etcd (test/env) and real
 * agent processes on loop devices, driven through the real dynamic-provider host (engine.ts):
 *
 * - the Node objects, the agent pods (the LvmSystem DaemonSet's own pod template, spec.nodeName set,
 *   status written through the status subresource: there is no kubelet), service accounts and the
 *   LvmSystem's RBAC (clusterModeRules for the Pulumi user, provisionerRules for the provisioner)
 *   are created in the API server;
 * - the provider lists the nodes the nodeSelector picks and the agent pods, requests a TokenRequest
 *   token for the provisioner, and calls every agent through the API server's pods/proxy;
 * - the API server reaches the pod IPs through its egress selector (pod-network.ts), which maps them
 *   to the agents on 127.0.0.1; the agents authenticate each call with TokenReview and
 *   SubjectAccessReview against the same API server.
 *
 * Missing binaries fail this test with what to run (test/env/install.sh); it never skips.
 */
import { randomBytes } from "node:crypto";
import { agentClient, type AgentEndpoint } from "../../src/agent-client/agent-client";
import { httpTransport } from "../../src/kube/http";
import {
  agentDaemonSet,
  clusterModeRules,
  planSystem,
  provisionerRules,
} from "../../src/components/lvm-system";
import { startControlPlane, type ControlPlane } from "../env/cluster";
import { reportPodStatus } from "../env/kubelet-stand-in";
import {
  commandLog,
  isWrite,
  membersOf,
  requireHostTier,
  Scratch,
  startAgent,
  vgs,
  type AgentProcess,
} from "../agent/harness";
import { ProviderError, ProviderHost, secret, serializeProvider, type Props } from "./engine";
import { PROGRAM_DIR, PROVIDER_TESTS_ROOT } from "./paths";
import { PodNetwork } from "./pod-network";
import { READY_WAIT_ENV } from "../../provider/runtime/v1/cluster-agents";

jest.setTimeout(300_000);

const SYSTEM = planSystem("lvm", { agentImage: "pulumi-lvm-agent:test" });
const NS = SYSTEM.namespace;
const PROVISIONER = SYSTEM.provisioner;
const VG = `prov-${randomBytes(3).toString("hex")}`;
/** Pod IPs from TEST-NET-2: the API server must accept them (global unicast); they are never dialled. */
const NODES = { "node-a": "198.51.100.10", "node-b": "198.51.100.11" } as const;
type Node = keyof typeof NODES;
const SELECTOR = {
  nodeSelectorTerms: [{ matchExpressions: [{ key: "zone", operator: "In", values: ["edge-1"] }] }],
};
/** How long the provider waits here for an agent pod that is not Ready ($PULUMI_LVM_AGENT_READY_WAIT_SECONDS). */
const READY_WAIT_SECONDS = 8;
/** The agent container's port in the DaemonSet's pod template (LvmSystem's default agentPort). */
const POD_PORT = 8080;

let cp: ControlPlane;
let network: PodNetwork;
let host: ProviderHost | undefined;
let providerText: string;
const scratch = {} as Record<Node, Scratch>;
const agents = {} as Record<Node, AgentProcess>;
/** Kubeconfig texts of the identities that run `pulumi up` here, and their API tokens. */
const users = {} as Record<"pulumi" | "noToken" | "noProxy", { kubeconfig: string; token: string }>;
let state: { id: string; inputs: Props; outputs: Props } | undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field
async function must(method: string, path: string, body?: unknown): Promise<any> {
  const r = await cp.request(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

const rbac = "/apis/rbac.authorization.k8s.io/v1";

async function serviceAccount(name: string): Promise<void> {
  await must("POST", `/api/v1/namespaces/${NS}/serviceaccounts`, { metadata: { name } });
}

/** A Role (or ClusterRole) with `rules`, bound to the service account `sa`. */
async function grant(sa: string, name: string, rules: unknown[], clusterWide = false): Promise<void> {
  const kind = clusterWide ? "ClusterRole" : "Role";
  const at = clusterWide ? rbac : `${rbac}/namespaces/${NS}`;
  await must("POST", `${at}/${kind.toLowerCase()}s`, { metadata: { name }, rules });
  await must("POST", `${at}/${kind.toLowerCase()}bindings`, {
    metadata: { name },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name },
    subjects: [{ kind: "ServiceAccount", name: sa, namespace: NS }],
  });
}

/** A kubeconfig for a service account, with an ordinary API token (the API server's audience). */
async function kubeconfigOf(sa: string): Promise<{ kubeconfig: string; token: string }> {
  const r = await must("POST", `/api/v1/namespaces/${NS}/serviceaccounts/${sa}/token`, {
    spec: { expirationSeconds: 3600 },
  });
  const token: string = r.status.token;
  const kubeconfig = [
    "apiVersion: v1",
    "kind: Config",
    "current-context: test",
    "contexts: [{name: test, context: {cluster: test, user: test}}]",
    `clusters: [{name: test, cluster: {server: "${cp.url}", certificate-authority-data: ${Buffer.from(cp.caPem).toString("base64")}}}]`,
    `users: [{name: test, user: {token: "${token}"}}]`,
    "",
  ].join("\n");
  return { kubeconfig, token };
}

/** The agent pod the LvmSystem DaemonSet would run on `node`, as the API server holds it. */
async function createAgentPod(node: Node): Promise<void> {
  // These agents serve plain HTTP (started without --tls-cert): the pod says so, as LvmSystem's
  // explicit opt-out (agentPlainHttp) makes it; the default (HTTPS) is test/operator/agent-trust's.
  const template = agentDaemonSet(SYSTEM, { agentImage: "pulumi-lvm-agent:test", agentPlainHttp: true }).spec
    .template;
  await must("POST", `/api/v1/namespaces/${NS}/pods`, {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: podName(node), labels: template.metadata.labels },
    spec: { ...template.spec, nodeName: node },
  });
  await setReady(node, true);
}

const podName = (node: Node) => `lvm-agent-${node}`;

/** The pod's status as a kubelet would report it: Running at its pod IP, Ready or not. */
async function setReady(node: Node, ready: boolean): Promise<void> {
  await reportPodStatus(cp, { namespace: NS, name: podName(node), ip: NODES[node], ready });
}

beforeAll(async () => {
  requireHostTier();
  for (const node of Object.keys(NODES) as Node[])
    scratch[node] = new Scratch(`cluster-${node}`, PROVIDER_TESTS_ROOT);
  network = await PodNetwork.start(scratch["node-a"].dir);
  cp = await startControlPlane({
    namespace: NS,
    apiserverFlags: [`--egress-selector-config-file=${network.configFile}`, "--allow-privileged=true"],
  });
  await must("POST", "/api/v1/namespaces", { metadata: { name: NS } });
  await cp.createNode("node-a", { zone: "edge-1" });
  await cp.createNode("node-b", { zone: "edge-1" });
  await cp.createNode("node-c", { zone: "edge-2" });

  // The agents' own identity delegates authentication and authorization (system:auth-delegator).
  await must("POST", `${rbac}/clusterrolebindings`, {
    metadata: { name: "lvm-agent-auth-delegator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "User", name: cp.identities.agent.username }],
  });
  // The LvmSystem's service accounts and RBAC, from the component's own rules.
  await serviceAccount(SYSTEM.agent);
  await serviceAccount(PROVISIONER);
  await grant(PROVISIONER, PROVISIONER, provisionerRules());
  const rules = clusterModeRules(PROVISIONER);
  const without = (resource: string) => rules.namespaced.filter((r) => !r.resources.includes(resource));
  for (const [sa, namespaced] of [
    ["pulumi-user", rules.namespaced],
    ["no-token", without("serviceaccounts/token")],
    ["no-proxy", without("pods/proxy")],
  ] as const) {
    await serviceAccount(sa);
    await grant(sa, `${sa}-cluster-mode`, [...namespaced]);
    await grant(sa, `${sa}-cluster-mode`, rules.clusterWide, true);
  }
  users.pulumi = await kubeconfigOf("pulumi-user");
  users.noToken = await kubeconfigOf("no-token");
  users.noProxy = await kubeconfigOf("no-proxy");

  for (const node of Object.keys(NODES) as Node[]) {
    const s = scratch[node];
    agents[node] = await startAgent({
      node,
      devices: [s.loop(), s.loop()],
      ...s.agentFiles(),
      auth: { kubeconfig: cp.kubeconfigFor("agent") },
      extraArgs: ["--namespace", NS],
      ownMachine: true, // the nodes have a group of one name, as on separate machines
    });
    network.route(NODES[node], POD_PORT, Number(new URL(agents[node].url).port));
    await createAgentPod(node);
  }
  providerText = await serializeProvider();
  // A short wait for agent pods that are not Ready (the default is 2 minutes): the tests below see
  // both the wait and its end.
  host = await ProviderHost.start(PROGRAM_DIR, "test", { [READY_WAIT_ENV]: String(READY_WAIT_SECONDS) });
});

afterAll(async () => {
  await host?.stop();
  for (const agent of Object.values(agents)) await agent.stop();
  await cp?.stop();
  await network?.close();
  for (const s of Object.values(scratch)) s.cleanup();
});

const devicesOf = (node: Node) => scratch[node].loops;
const writes = (node: Node) => commandLog(scratch[node].path("commands.jsonl")).filter(isWrite);
/** The users the agent's requests were authenticated as, since log entry `from`. */
const callers = (node: Node, from = 0) =>
  agents[node].logs
    .slice(from)
    .filter((e) => e.msg === "request" && String(e.path).startsWith("/v1/"))
    .map((e) => e.user);

/** One volume group on every node's devices (`Any`: each agent sees only its own), one Thick class. */
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

/** What `new NodeSet(..., { cluster: {...} })` registers: the kubeconfig a secret. */
function program(kubeconfig = users.pulumi.kubeconfig, specExtra: Props = {}): Props {
  return {
    nodeSetName: "edge",
    namespace: NS,
    spec: spec(specExtra),
    cluster: { kubeconfig: secret(kubeconfig), serviceAccount: PROVISIONER, nodeSelector: SELECTOR },
    __provider: providerText,
  };
}

const plansOf = (inputs: Props) =>
  inputs.plans as Record<string, { hash: string; steps: number; claimed: string[] }>;

describe("cluster mode through the API server's pod proxy", () => {
  it("the API server refuses to proxy to a loopback pod IP (why the pod network maps TEST-NET addresses)", async () => {
    await must("POST", `/api/v1/namespaces/${NS}/pods`, {
      metadata: { name: "loopback" },
      spec: {
        nodeName: "node-c",
        serviceAccountName: SYSTEM.agent,
        containers: [{ name: "c", image: "x", ports: [{ containerPort: POD_PORT }] }],
      },
    });
    await must("PATCH", `/api/v1/namespaces/${NS}/pods/loopback/status`, {
      status: { phase: "Running", podIP: "127.0.0.1", podIPs: [{ ip: "127.0.0.1" }] },
    });
    const proxied = await cp.request(
      "GET",
      `/api/v1/namespaces/${NS}/pods/http:loopback:${POD_PORT}/proxy/healthz`,
    );
    expect({ status: proxied.status, message: proxied.body.message }).toEqual({
      status: 400,
      message: "address not allowed",
    });
    await must("DELETE", `/api/v1/namespaces/${NS}/pods/loopback?gracePeriodSeconds=0`);
  });

  it("the API server removes the caller's Authorization before proxying: the agent sees no credentials", async () => {
    const proxied = await cp.request(
      "GET",
      `/api/v1/namespaces/${NS}/pods/http:${podName("node-a")}:${POD_PORT}/proxy/v1/status`,
      undefined,
      users.pulumi.token,
    );
    expect(proxied.status).toBe(401);
    expect(proxied.body.error.message).toMatch(/^a bearer token is required/);
  });

  it("check plans every node the nodeSelector picks, through the proxy, as the provisioner; nothing written", async () => {
    const logs = { a: agents["node-a"].logs.length, b: agents["node-b"].logs.length };
    const { inputs, failures } = await host!.check({}, program());
    expect(failures).toEqual([]);
    const plans = plansOf(inputs);
    expect(Object.keys(plans)).toEqual(["node-a", "node-b"]); // node-c is in zone edge-2
    for (const node of ["node-a", "node-b"] as const)
      expect(plans[node]!.claimed.sort()).toEqual(
        [...devicesOf(node)].sort().map((d) => `${d} → ${VG} (new volume group)`),
      );
    // Each agent authenticated the provisioner's token; the API server dialled only the mapped pod
    // IPs (it keeps connections alive across calls, so not once per call).
    expect(new Set(network.connects)).toEqual(
      new Set([`${NODES["node-a"]}:${POD_PORT}`, `${NODES["node-b"]}:${POD_PORT}`]),
    );
    const provisioner = `system:serviceaccount:${NS}:${PROVISIONER}`;
    expect(callers("node-a", logs.a)).toEqual([provisioner]);
    expect(callers("node-b", logs.b)).toEqual([provisioner]);
    expect([...writes("node-a"), ...writes("node-b")]).toEqual([]);
    state = { id: "", inputs, outputs: {} };
  });

  it("create applies every node's plan through the proxy; the test's own vgs sees both groups", async () => {
    const created = await host!.create(state!.inputs);
    expect(created.id).toBe(`${NS}/edge`);
    const plans = plansOf(state!.inputs);
    for (const node of ["node-a", "node-b"] as const) {
      expect((created.outputs.nodes as Record<string, Props>)[node]).toEqual({
        selected: true,
        planHash: plans[node]!.hash,
        stepsDone: plans[node]!.steps,
        stepsSkipped: 0,
        operation: expect.stringMatching(/.+/),
        blocked: [],
      });
      expect(vgs(devicesOf(node))).toEqual([expect.objectContaining({ vg_name: VG, pv_count: "2" })]);
      expect(membersOf(devicesOf(node), VG)).toEqual([...devicesOf(node)].sort());
    }
    state = { ...state!, id: created.id, outputs: created.outputs };
  });

  it("refresh reads every node's status through the proxy", async () => {
    const refreshed = await host!.read(state!.id, state!.outputs, state!.inputs);
    for (const node of ["node-a", "node-b"])
      expect((refreshed.outputs.nodes as Record<string, Props>)[node]).toMatchObject({
        state: "Ready",
        volumeGroups: { [VG]: { state: "Healthy" } },
      });
    state = { ...state!, outputs: refreshed.outputs };
  });

  it("an agent pod that becomes Ready while check waits is planned, not reported missing", async () => {
    await setReady("node-b", false);
    const started = Date.now();
    try {
      const checking = host!.check(state!.inputs, program());
      await new Promise((r) => setTimeout(r, 2_000));
      await setReady("node-b", true);
      const { inputs, failures } = await checking;
      expect(failures).toEqual([]);
      expect(Object.keys(plansOf(inputs)).sort()).toEqual(["node-a", "node-b"]);
      expect(Date.now() - started).toBeGreaterThanOrEqual(2_000);
    } finally {
      await setReady("node-b", true);
    }
  });

  it("a selected node without a Running and Ready agent pod is a check failure naming the node and the pod, after the wait", async () => {
    await setReady("node-b", false);
    await must("PATCH", "/api/v1/nodes/node-c", { metadata: { labels: { zone: "edge-1" } } });
    try {
      const started = Date.now();
      const { inputs, failures } = await host!.check(state!.inputs, program());
      // node-b's pod exists and was waited for; node-c has none and was not (it could not delay this).
      expect(Date.now() - started).toBeGreaterThanOrEqual((READY_WAIT_SECONDS - 2) * 1000);
      expect(failures).toEqual([
        {
          property: "cluster",
          reason: `node node-b: no agent pod on it is Running and Ready: ${NS}/${podName("node-b")} (phase Running, Ready False: ContainersNotReady (readiness probe failed))`,
        },
        {
          property: "cluster",
          reason: `node node-c: no agent pod (app.kubernetes.io/name=pulumi-lvm-agent in namespace ${NS}) runs on it; check the agent DaemonSet's nodeSelector and tolerations`,
        },
      ]);
      expect(Object.keys(plansOf(inputs))).toEqual(["node-a"]);
    } finally {
      await setReady("node-b", true);
      await must("PATCH", "/api/v1/nodes/node-c", { metadata: { labels: { zone: "edge-2" } } });
    }
  });

  it("an identity that may not request the provisioner's token gets the API server's 403, named", async () => {
    const { failures } = await host!.check(state!.inputs, program(users.noToken.kubeconfig));
    expect(failures).toEqual([
      {
        property: "cluster",
        reason:
          `cannot get a token for service account ${NS}/${PROVISIONER} (TokenRequest, audience pulumi-lvm-agent/node-a): ` +
          `POST /api/v1/namespaces/${NS}/serviceaccounts/${PROVISIONER}/token: HTTP 403: serviceaccounts "${PROVISIONER}" is forbidden: ` +
          `User "system:serviceaccount:${NS}:no-token" cannot create resource "serviceaccounts/token" in API group "" in the namespace "${NS}"`,
      },
    ]);
  });

  it("an identity without pods/proxy gets the API server's 403 per node, naming the node and the pod", async () => {
    // The API server names the proxied resource "<scheme>:<pod>:<port>" (also what RBAC resourceNames would match).
    const { failures } = await host!.check(state!.inputs, program(users.noProxy.kubeconfig));
    expect(failures).toEqual(
      (["node-a", "node-b"] as const).map((node) => ({
        property: "cluster",
        reason:
          `node ${node}: POST /v1/plan (pod ${NS}/${podName(node)}, through the API server) failed with HTTP 403: ` +
          `pods "http:${podName(node)}:${POD_PORT}" is forbidden: User "system:serviceaccount:${NS}:no-proxy" cannot create resource "pods/proxy" in API group "" in the namespace "${NS}"`,
      })),
    );
  });

  it("plan latency: through the API server's proxy and directly (printed, not asserted)", async () => {
    const token = (
      await must("POST", `/api/v1/namespaces/${NS}/serviceaccounts/${PROVISIONER}/token`, {
        spec: { audiences: ["pulumi-lvm-agent/node-a"], expirationSeconds: 600 },
      })
    ).status.token as string;
    const client = agentClient(httpTransport);
    const direct: AgentEndpoint = { node: "node-a", url: agents["node-a"].url, token };
    const proxied: AgentEndpoint = {
      node: "node-a",
      url: `${cp.url}/api/v1/namespaces/${NS}/pods/http:${podName("node-a")}:${POD_PORT}/proxy/`,
      token,
      proxy: {
        namespace: NS,
        pod: podName("node-a"),
        apiServer: { server: cp.url, ca: () => cp.caPem, token: () => users.pulumi.token },
      },
    };
    const median = async (ep: AgentEndpoint) => {
      const ms: number[] = [];
      for (let i = 0; i < 15; i++) {
        const t0 = performance.now();
        await client.plan(ep, spec() as never);
        ms.push(performance.now() - t0);
      }
      return ms.sort((a, b) => a - b)[7]!;
    };
    await median(proxied); // warm both paths (TLS sessions, the agents' auth caches)
    const [viaProxy, viaDirect] = [await median(proxied), await median(direct)];
    console.log(
      `POST /v1/plan on node-a (2 devices), median of 15: through the API server's pod proxy ${viaProxy.toFixed(1)} ms, direct ${viaDirect.toFixed(1)} ms`,
    );
    expect(viaProxy).toBeGreaterThan(0);
  });

  it("destroy with deletionPolicy Delete tears down every node through the proxy", async () => {
    const { inputs } = await host!.check(state!.inputs, program(undefined, { deletionPolicy: "Delete" }));
    const updated = await host!.update(state!.id, state!.outputs, inputs, state!.inputs);
    state = { ...state!, inputs, outputs: updated.outputs };
    await host!.delete(state!.id, state!.outputs, state!.inputs);
    for (const node of ["node-a", "node-b"] as const) expect(vgs(devicesOf(node))).toEqual([]);
  });
});

describe("an identity without access: errors, not crashes", () => {
  it("create through the host with the no-proxy identity fails naming each node and the 403", async () => {
    const { inputs } = await host!.check({}, program());
    const error = await host!.create({ ...inputs, cluster: program(users.noProxy.kubeconfig).cluster }).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ProviderError);
    expect((error as ProviderError).message).toMatch(
      new RegExp(
        `^applying node set ${NS}/edge failed:\\nnode node-a: POST /v1/apply \\(pod ${NS}/${podName("node-a")}, through the API server\\) failed with HTTP 403: `,
      ),
    );
  });
});

describe("secrets", () => {
  it("no kubeconfig, API token or agent token is in plain text in anything the host returned, the state, or its log", () => {
    expect(host!.received.length).toBeGreaterThan(5);
    const plainStrings = (value: unknown): string[] => {
      if (typeof value === "string") return [value];
      if (Array.isArray(value)) return value.flatMap(plainStrings);
      if (typeof value === "object" && value !== null) {
        if ("4dabf18193072939515e22adb298388d" in value) return [];
        return Object.entries(value).flatMap(([k, v]) => [k, ...plainStrings(v)]);
      }
      return [];
    };
    const everything = plainStrings([host!.received, state]).join("\n") + host!.log;
    // Service-account tokens are JWTs: base64url of '{"' starts every header and payload.
    expect(everything).not.toMatch(/eyJ[\w-]+\.eyJ/);
    for (const user of Object.values(users)) {
      expect(everything).not.toContain(user.token);
      expect(everything).not.toContain(user.kubeconfig);
    }
    expect((state!.outputs.cluster as Props).kubeconfig).toEqual(secret(users.pulumi.kubeconfig));
  });
});
