import { agentPodOf, podProxyPath, type Pod } from "./agent-pods";

function pod(
  name: string,
  node: string,
  over: {
    phase?: string;
    ready?: string;
    podIP?: string;
    deleting?: boolean;
    tls?: boolean;
    ports?: Array<{ name?: string; containerPort: number }>;
  } = {},
): Pod {
  return {
    metadata: { name, ...(over.deleting ? { deletionTimestamp: "2026-01-01T00:00:00Z" } : {}) },
    spec: {
      nodeName: node,
      containers: [
        { name: "sidecar", ports: [{ name: "metrics", containerPort: 9000 }] },
        {
          name: "agent",
          ports: over.ports ?? [{ name: "http", containerPort: 8080 }],
          readinessProbe: { httpGet: { scheme: over.tls ? "HTTPS" : "HTTP" } },
        },
      ],
    },
    status: {
      phase: over.phase ?? "Running",
      ...(over.podIP === "" ? {} : { podIP: over.podIP ?? "10.1.2.3" }),
      conditions: [{ type: "Ready", status: over.ready ?? "True" }],
    },
  };
}

describe("agentPodOf", () => {
  test("the Running and Ready pod on the node: the agent container's http port, scheme from its probe", () => {
    expect(agentPodOf("node-a", "lvm", [pod("a", "node-a"), pod("b", "node-b", { tls: true })])).toEqual({
      ok: true,
      pod: { name: "a", scheme: "http", port: 8080 },
    });
    expect(agentPodOf("node-b", "lvm", [pod("a", "node-a"), pod("b", "node-b", { tls: true })])).toEqual({
      ok: true,
      pod: { name: "b", scheme: "https", port: 8080 },
    });
  });

  test("during a rolling update: the ready pod, never the one being deleted", () => {
    const pods = [
      pod("old", "node-a", { deleting: true }),
      pod("new", "node-a", { ready: "False" }),
      pod("new2", "node-a"),
    ];
    expect(agentPodOf("node-a", "lvm", pods)).toMatchObject({ ok: true, pod: { name: "new2" } });
  });

  test("the agent container's first port when none is named http", () => {
    expect(
      agentPodOf("node-a", "lvm", [pod("a", "node-a", { ports: [{ containerPort: 9443 }] })]),
    ).toMatchObject({
      ok: true,
      pod: { port: 9443 },
    });
  });

  test.each([
    [
      "no pod on the node",
      [pod("b", "node-b")],
      "node node-a: no agent pod (app.kubernetes.io/name=pulumi-lvm-agent in namespace lvm) runs on it; check the agent DaemonSet's nodeSelector and tolerations",
      false,
    ],
    [
      "a pod that is not ready",
      [pod("a", "node-a", { ready: "False" })],
      "node node-a: no agent pod on it is Running and Ready: lvm/a (phase Running, Ready False)",
      true,
    ],
    [
      "a pending pod",
      [pod("a", "node-a", { phase: "Pending", ready: "False", podIP: "" })],
      "node node-a: no agent pod on it is Running and Ready: lvm/a (phase Pending, Ready False)",
      true,
    ],
    [
      "a running, ready pod without an IP, and one being deleted",
      [pod("a", "node-a", { podIP: "" }), pod("z", "node-a", { deleting: true })],
      "node node-a: no agent pod on it is Running and Ready: lvm/a (phase Running, Ready True, no pod IP), lvm/z (being deleted)",
      true,
    ],
    [
      "a pod without ports",
      [pod("a", "node-a", { ports: [] })],
      "node node-a: its agent pod lvm/a declares no container port",
      false,
    ],
  ])("names the node and why: %s (may become Ready: %s)", (_what, pods, message, mayBecomeReady) => {
    expect(agentPodOf("node-a", "lvm", pods)).toEqual({ ok: false, message, mayBecomeReady });
  });
});

test("podProxyPath", () => {
  expect(podProxyPath("lvm-system", { name: "lvm-agent-x7k2p", scheme: "https", port: 8443 })).toBe(
    "/api/v1/namespaces/lvm-system/pods/https:lvm-agent-x7k2p:8443/proxy/",
  );
});
