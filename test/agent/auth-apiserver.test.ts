/**
 * The agent's authentication and authorization against a REAL kube-apiserver + etcd (test/env):
 * service-account tokens bound to the agent's audience (TokenRequest), TokenReview, and a
 * SubjectAccessReview answered by RBAC. The agent reaches the API server with its own identity,
 * which holds system:auth-delegator, as a kubelet-style webhook authenticator would.
 * Missing binaries fail this test with what to run (test/env/install.sh); it never skips.
 */
import { ControlPlane, startControlPlane } from "../env/cluster";
import { commandLog, request, requireHostTier, Scratch, startAgent, type AgentProcess } from "./harness";

jest.setTimeout(180_000);

const NS = "pulumi-lvm-system";
const NODE = "node-k8s";
const AUDIENCE = "pulumi-lvm-agent";

let cp: ControlPlane;
let scratch: Scratch;
let agent: AgentProcess | undefined;

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- parsed JSON, checked field by field
async function must(method: string, path: string, body: unknown): Promise<any> {
  const r = await cp.request(method, path, body);
  if (r.status >= 300) throw new Error(`${method} ${path}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
  return r.body;
}

async function serviceAccountToken(name: string, audiences: string[]): Promise<string> {
  const r = await must("POST", `/api/v1/namespaces/${NS}/serviceaccounts/${name}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { audiences, expirationSeconds: 600 },
  });
  return r.status.token;
}

beforeAll(async () => {
  requireHostTier();
  cp = await startControlPlane({ namespace: NS });
  scratch = new Scratch("auth-apiserver");
  await must("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: NS } });
  for (const sa of ["operator", "bystander"])
    await must("POST", `/api/v1/namespaces/${NS}/serviceaccounts`, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: sa },
    });
  // The agent's own identity may ask TokenReviews and SubjectAccessReviews (what the kubelet's webhook mode needs).
  await must("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: "pulumi-lvm-agent-auth-delegator" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:auth-delegator" },
    subjects: [{ kind: "User", name: cp.identities.agent.username }],
  });
  // The operator may update this node's LVMNode (and only it).
  await must("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "lvmnode-updater" },
    rules: [
      { apiGroups: ["lvm.topolvm.io"], resources: ["lvmnodes"], resourceNames: [NODE], verbs: ["update"] },
    ],
  });
  await must("POST", `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: "operator-updates-lvmnodes" },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "lvmnode-updater" },
    subjects: [{ kind: "ServiceAccount", name: "operator", namespace: NS }],
  });
  agent = await startAgent({
    node: NODE,
    devices: [scratch.loop()],
    ...scratch.agentFiles(),
    auth: { kubeconfig: cp.kubeconfigFor("agent") },
    extraArgs: ["--namespace", NS, "--audience", AUDIENCE],
  });
}, 180_000);

afterAll(async () => {
  await agent?.stop();
  scratch?.cleanup();
  await cp?.stop();
});

const status = (token?: string) => request(agent!.url, "GET", "/v1/status", token ? { token } : {});
const commands = () => commandLog(scratch.path("commands.jsonl")).length;

describe("agent auth against a real kube-apiserver", () => {
  it("200 for a service account token bound to the agent's audience whose account may update this LVMNode", async () => {
    const res = await status(await serviceAccountToken("operator", [AUDIENCE]));
    expect(res.status).toBe(200);
    expect(res.json.node).toBe(NODE);
  });

  it("401 for the same account's token bound to the API server's audience (a stolen ordinary token does not work here)", async () => {
    const before = commands();
    const res = await status(
      await serviceAccountToken("operator", ["https://kubernetes.default.svc.cluster.local"]),
    );
    expect(res.status).toBe(401);
    expect(commands()).toBe(before);
  });

  it("401 without a token, and for a static (audience-less) token", async () => {
    const before = commands();
    expect((await status()).status).toBe(401);
    expect((await status(cp.tokens.unprivileged)).status).toBe(401);
    expect(commands()).toBe(before);
  });

  it("403 for a valid, audience-bound token of an account RBAC does not allow", async () => {
    const before = commands();
    const res = await status(await serviceAccountToken("bystander", [AUDIENCE]));
    expect(res.status).toBe(403);
    expect(res.json.error.message).toMatch(
      /system:serviceaccount:pulumi-lvm-system:bystander" may not update lvmnodes.lvm.topolvm.io\/node-k8s/,
    );
    expect(commands()).toBe(before);
  });
});
