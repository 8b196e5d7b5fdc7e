import { LvmSystem } from "./lvm-system";
import { networkPolicyManifests, type FencedSystem } from "./network-policies";
import { lvmSystemUnderMocks } from "../../test/support/components/lvm-system-fixture";
import { find, runFailingProgram, runProgram } from "../../test/support/components/pulumi-mocks";

const POLICY = "kubernetes:networking.k8s.io/v1:NetworkPolicy";
const DS = "kubernetes:apps/v1:DaemonSet";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";

const args = lvmSystemUnderMocks();

const ns = (names: string[]) => ({
  namespaceSelector: {
    matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: names }],
  },
});
const tcp = (port: number) => [{ protocol: "TCP", port }];
const everyAddress = [{ ipBlock: { cidr: "0.0.0.0/0" } }, { ipBlock: { cidr: "::/0" } }];

describe("LvmSystem's NetworkPolicies", () => {
  test("on by default: the agents' port from the operator, the control plane and monitoring; the operator's webhook from the control plane, its metrics from monitoring", async () => {
    const recorded = await runProgram(() => new LvmSystem("lvm", args()));
    const policies = recorded.filter((r) => r.type === POLICY);
    expect(policies.map((p) => p.inputs.metadata.name).sort()).toEqual(["lvm-agent", "lvm-operator"]);

    const agentPod = find(recorded, DS, "lvm-agent").inputs.spec.template;
    const operatorPod = find(recorded, DEPLOYMENT, "lvm-operator").inputs.spec.template;
    const agent = find(recorded, POLICY, "lvm-agent-ingress").inputs;
    // it selects exactly the agent pods, by the labels the DaemonSet gives them
    expect(agent.metadata.namespace).toBe("lvm-system");
    expect(agent.spec.podSelector).toEqual({ matchLabels: agentPod.metadata.labels });
    expect(agent.spec.policyTypes).toEqual(["Ingress"]);
    expect(agent.spec.ingress).toEqual([
      {
        from: [{ podSelector: { matchLabels: operatorPod.metadata.labels } }, ...everyAddress],
        ports: tcp(8080),
      },
      { from: [ns(["monitoring"])], ports: tcp(8080) },
    ]);
    const operator = find(recorded, POLICY, "lvm-operator-ingress").inputs;
    expect(operator.spec.podSelector).toEqual({ matchLabels: operatorPod.metadata.labels });
    const ports = Object.fromEntries(
      operatorPod.spec.containers[0].ports.map((p: { name: string; containerPort: number }) => [
        p.name,
        p.containerPort,
      ]),
    );
    expect(operator.spec.ingress).toEqual([
      { from: everyAddress, ports: tcp(ports.webhook) },
      { from: [ns(["monitoring"])], ports: tcp(ports.http) },
    ]);
  });

  test("controlPlane, monitoringNamespaces and agentPort are followed; admission off: no webhook rule; no operator: no operator policy", async () => {
    const recorded = await runProgram(
      () =>
        new LvmSystem(
          "s",
          args({
            agentPort: 9100,
            networkPolicies: {
              controlPlane: {
                cidrs: ["10.0.0.0/28", "fd00::/120"],
                pods: [{ namespace: "kube-system", labels: { "k8s-app": "konnectivity-agent" } }],
              },
              monitoringNamespaces: ["prometheus", "observability"],
            },
            operator: { admission: { enabled: false } },
          }),
        ),
    );
    const controlPlane = [
      { ipBlock: { cidr: "10.0.0.0/28" } },
      { ipBlock: { cidr: "fd00::/120" } },
      {
        namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } },
        podSelector: { matchLabels: { "k8s-app": "konnectivity-agent" } },
      },
    ];
    const agent = find(recorded, POLICY, "s-agent-ingress").inputs.spec.ingress;
    expect(agent[0].from.slice(1)).toEqual(controlPlane);
    expect(agent[0].ports).toEqual(tcp(9100));
    expect(agent[1]).toEqual({ from: [ns(["prometheus", "observability"])], ports: tcp(9100) });
    expect(find(recorded, POLICY, "s-operator-ingress").inputs.spec.ingress).toEqual([
      { from: [ns(["prometheus", "observability"])], ports: tcp(8081) },
    ]);

    const alone = await runProgram(
      () => new LvmSystem("alone", args({ operator: { enabled: false }, agentTlsSecretName: "mine" })),
    );
    expect(alone.filter((r) => r.type === POLICY).map((r) => r.name)).toEqual(["alone-agent-ingress"]);
    expect(find(alone, POLICY, "alone-agent-ingress").inputs.spec.ingress[0].from).toEqual(everyAddress);
  });

  test("enabled: false renders none", async () => {
    const recorded = await runProgram(
      () => new LvmSystem("open", args({ networkPolicies: { enabled: false } })),
    );
    expect(recorded.filter((r) => r.type === POLICY)).toEqual([]);
  });

  test("bad CIDRs, namespaces and unknown keys are refused with their paths, before anything registers", async () => {
    const { error, registered } = await runFailingProgram(
      () =>
        new LvmSystem(
          "bad",
          args({
            networkPolicies: {
              controlPlane: {
                cidrs: ["10.0.0.0", "10.0.0.0/33", "::/129", "fd00::/64"],
                pods: [{ namespace: "Kube_System" }],
              },
              monitoringNamespaces: ["Monitoring"],
              // @ts-expect-error an unknown key
              egress: true,
            },
          }),
        ),
    );
    expect(registered).toBe(0);
    const lines = error.message.split("\n");
    expect(lines).toEqual(
      expect.arrayContaining([
        expect.stringMatching(
          /args\.networkPolicies\.controlPlane\.cidrs\[0\]: must be an IPv4 or IPv6 CIDR .*"10\.0\.0\.0"/,
        ),
        expect.stringMatching(/args\.networkPolicies\.controlPlane\.cidrs\[1\]: .*"10\.0\.0\.0\/33"/),
        expect.stringMatching(/args\.networkPolicies\.controlPlane\.cidrs\[2\]: .*"::\/129"/),
        expect.stringMatching(/args\.networkPolicies\.controlPlane\.pods\[0\]\.namespace: /),
        expect.stringMatching(/args\.networkPolicies\.monitoringNamespaces\[0\]: /),
        "  args.networkPolicies.egress: unknown field",
      ]),
    );
    expect(error.message).not.toContain("cidrs[3]");
  });
});

describe("networkPolicyManifests", () => {
  const system: FencedSystem = {
    namespace: "lvm-system",
    agent: { name: "lvm-agent", labels: { app: "agent" }, port: 8080 },
    operator: { name: "lvm-operator", labels: { app: "operator" }, metricsPort: 8081, webhookPort: 9443 },
  };

  test("a rule left without sources is dropped, never rendered with an empty `from` (which admits everyone)", () => {
    const [agent, operator] = networkPolicyManifests(
      { ...system, operator: undefined },
      { controlPlane: { cidrs: [] }, monitoringNamespaces: [] },
    );
    expect(agent!.spec.ingress).toEqual([]); // deny all but the node's own traffic (probes)
    expect(operator).toBeUndefined();
    const [, op] = networkPolicyManifests(system, { controlPlane: { cidrs: [] }, monitoringNamespaces: [] });
    expect(op!.spec.ingress).toEqual([]);
    for (const p of networkPolicyManifests(system, { controlPlane: { cidrs: [] } }))
      for (const r of p.spec.ingress) expect(r.from.length).toBeGreaterThan(0);
  });
});
