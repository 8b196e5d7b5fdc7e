import type { Transport } from "../../../src/kube/http";
import { locateAgents } from "./locate-agents";
import type { Inputs } from "./state";

const noCalls: Transport = async (request) => {
  throw new Error(`unexpected call to ${request.url}`);
};
const base = { nodeSetName: "edge", namespace: "lvm", spec: { volumeGroups: [] } } as unknown as Inputs;

describe("locateAgents", () => {
  test("sandbox: the agents map, sorted by node, only the nodes asked for, no call", async () => {
    const inputs = {
      ...base,
      agents: { b: { url: "http://b", token: "tb" }, a: { url: "http://a", token: "ta", ca: "PEM" } },
    };
    expect(await locateAgents(noCalls, inputs)).toEqual({
      endpoints: [
        { node: "a", url: "http://a", token: "ta", ca: "PEM" },
        { node: "b", url: "http://b", token: "tb" },
      ],
      missing: [],
    });
    expect((await locateAgents(noCalls, inputs, ["b"])).endpoints.map((e) => e.node)).toEqual(["b"]);
  });

  test("cluster: through the Kubernetes API (here: the pod list for the given node)", async () => {
    const calls: string[] = [];
    const transport: Transport = async (request) => {
      calls.push(`${request.method} ${request.url.pathname}`);
      return { status: 200, body: JSON.stringify({ items: [] }) };
    };
    const kubeconfig =
      "current-context: c\ncontexts: [{name: c, context: {cluster: k}}]\nclusters: [{name: k, cluster: {server: https://api}}]\n";
    const located = await locateAgents(
      transport,
      { ...base, cluster: { kubeconfig, serviceAccount: "sa" } },
      ["n1"],
    );
    expect(located.missing.map((m) => m.node)).toEqual(["n1"]);
    expect(calls).toEqual(["GET /api/v1/namespaces/lvm/pods"]);
  });
});
