/**
 * What one node's agent can do with what the operator sends it (issue 12, item 5), against a real
 * kube-apiserver and REAL agents on loop devices for n1 and n2:
 * - the token the operator sends to n1's agent is refused by n2's agent (it is bound to n1's
 *   audience), even with a target header naming n2;
 * - the operator calls the agents over HTTPS, verifying them against the agents' CA (pinned, with a
 *   fixed server name): an agent whose certificate another CA signed is refused, and nothing is
 *   sent over plain HTTP unless the operator was told it may.
 *
 *   npx jest test/operator/agent-trust --selectProjects integration
 */
import { agentClient, AgentCallError } from "../../src/agent-client/agent-client";
import { httpTransport, type Transport } from "../../src/kube/http";
import { TARGET_HEADER } from "../../src/agent-api/target";
import type { Json } from "../env/cluster";
import { startAgentCluster, type AgentCluster } from "./agent-cluster";
import { AGENT_NAMESPACE, eventually, lvmNodesPath, must, setsPath } from "./env";
import type { LVMNodeSpec } from "../../src/api";
import { AGENT_SERVER_NAME } from "../../src/agent-api/auth";
import { issueAgentCertificates } from "../../src/components/agent-certificates";
import { AgentDriver, type AgentTls } from "../../src/operator/agents/driver";
import { tokenRequests } from "../../src/operator/agents/token-request";
import { systemClock } from "../../src/kube/clock";
import { createKubeClient } from "../../src/kube/client";

jest.setTimeout(240_000);

const NS = "storage";
const RESYNC_MS = 3000;

/** Every request the operator sent to an agent: where, and with which token. */
const sent: Array<{ url: string; token: string; target: string }> = [];
const recording: Transport = (request) => {
  sent.push({
    url: request.url.href,
    token: (request.headers.authorization ?? "").replace(/^Bearer /, ""),
    target: request.headers[TARGET_HEADER] ?? "",
  });
  return httpTransport(request);
};

let c: AgentCluster;

beforeAll(async () => {
  c = await startAgentCluster({
    nodes: ["n1", "n2"],
    namespaces: [NS],
    resyncMs: RESYNC_MS,
    transport: recording,
  });
}, 240_000);

afterAll(async () => {
  await c?.stop();
});

const state = async (node: string) =>
  ((await c.cp.request("GET", lvmNodesPath(NS, node))).body as Json)?.status?.state;

describe("the operator's token for one node's agent", () => {
  it("is accepted by that agent, and refused by any other (even with a target naming it)", async () => {
    await must(c.cp, "POST", setsPath(NS), {
      apiVersion: "lvm.topolvm.io/v2alpha1",
      kind: "LVMNodeSet",
      metadata: { name: "trust", namespace: NS },
      spec: {
        nodeSelector: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: "role", operator: "In", values: ["storage"] }] }],
        },
        // Selects no device: the agents plan (the operator calls them) and nothing is written.
        template: {
          volumeGroups: [
            {
              name: "vg-trust",
              deviceSelector: {
                deviceSelectorTerms: [
                  { matchExpressions: [{ key: "path", operator: "In", values: ["/dev/none"] }] },
                ],
              },
            },
          ],
        },
      },
    });
    const toN1 = await eventually(
      "the operator called n1's agent",
      async () =>
        sent.find((s) => s.url.startsWith(c.agents.n1!.url.replace(/\/$/, "")) && s.target === `${NS}/n1`),
      60_000,
      200,
    );
    await eventually("n1's LVMNode has a state", async () => state("n1"), 60_000, 200);
    // What n1's agent (or whoever owns node n1) does with it: call n2's agent, for n2.
    const replay = agentClient().status({
      node: "n2",
      namespace: NS,
      url: c.agents.n2!.url,
      token: toN1.token,
      ...tlsOf(c),
    });
    await expect(replay).rejects.toBeInstanceOf(AgentCallError);
    await expect(replay).rejects.toMatchObject({ status: 401 });
    // The same token still works where it was meant to.
    await expect(
      agentClient().status({
        node: "n1",
        namespace: NS,
        url: c.agents.n1!.url,
        token: toN1.token,
        ...tlsOf(c),
      }),
    ).resolves.toMatchObject({ node: "n1" });
  });
});

describe("TLS between the operator and the agents", () => {
  const pods = async () => (await must(c.cp, "GET", `/api/v1/namespaces/${AGENT_NAMESPACE}/pods`)).items;
  const driverWith = async (tls: AgentTls) => {
    const items = await pods();
    return new AgentDriver({
      client: agentClient(),
      pods: () => items,
      namespace: AGENT_NAMESPACE,
      token: tokenRequests({
        kube: createKubeClient({
          connection: { server: c.cp.url, token: () => c.cp.tokens.operator, ca: () => c.cp.caPem },
        }),
        serviceAccount: { namespace: saNs(), name: saName() },
        clock: systemClock,
      }),
      tls,
      clock: systemClock,
    });
  };
  const spec = async () => (await must(c.cp, "GET", lvmNodesPath(NS, "n1"))).spec as LVMNodeSpec;

  it("every call the operator made went over HTTPS", () => {
    expect(sent.length).toBeGreaterThan(0);
    expect(sent.filter((s) => !s.url.startsWith("https://"))).toEqual([]);
  });

  it("an agent whose certificate another CA signed is refused: nothing is planned", async () => {
    const other = await issueAgentCertificates();
    const d = await driverWith({ ca: async () => other.caCert, serverName: AGENT_SERVER_NAME });
    const outcome = await d.sync({ node: "n1", namespace: NS }, await spec());
    expect(outcome).toMatchObject({ kind: "unavailable" });
    expect(outcome.kind === "unavailable" && outcome.message).toMatch(
      /node n1: cannot reach its agent at https:\/\/127\.0\.0\.1:\d+: .*(self-signed|unable to verify|unable to get)/i,
    );
  });

  it("the right CA but another server name is refused too", async () => {
    const d = await driverWith({ ca: async () => c.tls!.ca, serverName: "someone-else" });
    const outcome = await d.sync({ node: "n1", namespace: NS }, await spec());
    expect(outcome.kind === "unavailable" && outcome.message).toMatch(/altnames|Hostname/i);
  });

  it("the right CA and name: served", async () => {
    const d = await driverWith({ ca: async () => c.tls!.ca, serverName: AGENT_SERVER_NAME });
    expect(await d.sync({ node: "n1", namespace: NS }, await spec())).toMatchObject({
      kind: expect.stringMatching(/synced|blocked/),
    });
  });
});

const saNs = () => c.cp.identities.operator.username.split(":")[2]!;
const saName = () => c.cp.identities.operator.username.split(":")[3]!;

/** How this test reaches an agent directly: the cluster's agent CA, when they serve HTTPS. */
function tlsOf(cluster: AgentCluster): { ca?: string; serverName?: string } {
  return cluster.tls ? { ca: cluster.tls.ca, serverName: cluster.tls.serverName } : {};
}
