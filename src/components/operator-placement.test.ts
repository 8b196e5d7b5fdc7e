import { LvmSystem, type LvmSystemArgs } from "./lvm-system";
import { lvmSystemUnderMocks } from "../../test/support/components/lvm-system-fixture";
import { find, runFailingProgram, runProgram } from "../../test/support/components/pulumi-mocks";

const DEPLOYMENT = "kubernetes:apps/v1:Deployment";
const DS = "kubernetes:apps/v1:DaemonSet";

const args = lvmSystemUnderMocks();

async function operatorPod(name: string, extra: Partial<LvmSystemArgs>) {
  const recorded = await runProgram(() => new LvmSystem(name, args(extra)));
  return {
    operator: find(recorded, DEPLOYMENT, `${name}-operator`).inputs.spec.template.spec,
    agent: find(recorded, DS, `${name}-agent`).inputs.spec.template.spec,
  };
}

const spreadReplicas = (name: string) => ({
  preferredDuringSchedulingIgnoredDuringExecution: [
    {
      weight: 100,
      podAffinityTerm: {
        topologyKey: "kubernetes.io/hostname",
        labelSelector: {
          matchLabels: {
            "app.kubernetes.io/name": "pulumi-lvm-operator",
            "app.kubernetes.io/instance": name,
          },
        },
      },
    },
  ],
});

describe("where the operator runs", () => {
  test("by default off the nodes the agents run on, when the agents are confined to some (a preference: it still runs where nothing else fits)", async () => {
    const { operator, agent } = await operatorPod("conf", {
      nodeSelector: { "acme.com/storage": "true", "kubernetes.io/os": "linux" },
    });
    expect(agent.nodeSelector).toEqual({ "acme.com/storage": "true", "kubernetes.io/os": "linux" });
    expect(operator.nodeSelector).toEqual({ "kubernetes.io/os": "linux" });
    expect(operator.affinity).toEqual({
      // a node without the agents' label (or with another value) is preferred; the OS label says nothing
      nodeAffinity: {
        preferredDuringSchedulingIgnoredDuringExecution: [
          {
            weight: 100,
            preference: {
              matchExpressions: [{ key: "acme.com/storage", operator: "NotIn", values: ["true"] }],
            },
          },
        ],
      },
      podAntiAffinity: spreadReplicas("conf-operator"),
    });
    // agents on every Linux node (the default): nothing to prefer
    const everywhere = await operatorPod("all", {});
    expect(everywhere.operator.affinity).toEqual({ podAntiAffinity: spreadReplicas("all-operator") });
    expect(everywhere.operator.nodeSelector).toEqual({ "kubernetes.io/os": "linux" });
  });

  test("operator.nodeSelector, tolerations and affinity: given, they are used; each affinity kind given replaces ours", async () => {
    const tolerations = [
      { key: "node-role.kubernetes.io/control-plane", operator: "Exists", effect: "NoSchedule" },
    ];
    const nodeAffinity = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: "node-role.kubernetes.io/control-plane", operator: "Exists" }] },
        ],
      },
    };
    const { operator } = await operatorPod("cp", {
      nodeSelector: { "acme.com/storage": "true" },
      operator: {
        nodeSelector: { "acme.com/pool": "system" },
        tolerations,
        affinity: { nodeAffinity },
      },
    });
    expect(operator.nodeSelector).toEqual({ "acme.com/pool": "system" });
    expect(operator.tolerations).toEqual(tolerations);
    expect(operator.affinity).toEqual({ nodeAffinity, podAntiAffinity: spreadReplicas("cp-operator") });
  });

  test("bad placement is refused with its path, before anything registers", async () => {
    const { error, registered } = await runFailingProgram(
      () =>
        new LvmSystem(
          "bad",
          args({
            operator: {
              nodeSelector: { "bad key!": "x" },
              tolerations: [{ operator: "Maybe" }],
              // @ts-expect-error not an affinity kind
              affinity: { nodeAfinity: {} },
            },
          }),
        ),
    );
    expect(registered).toBe(0);
    expect(error.message).toContain("args.operator.nodeSelector.bad key!:");
    expect(error.message).toContain("args.operator.tolerations[0].operator:");
    expect(error.message).toContain("args.operator.affinity.nodeAfinity: unknown field");
  });
});
