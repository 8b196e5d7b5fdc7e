import YAML from "yaml";
import * as fs from "node:fs";
import * as path from "node:path";
import { LvmSystem } from "./lvm-system";
import { RULES_FILE } from "../metrics/alert-rules";
import { lvmSystemUnderMocks } from "../../test/support/components/lvm-system-fixture";
import { find, runFailingProgram, runProgram } from "../../test/support/components/pulumi-mocks";

const CR = "kubernetes:monitoring.coreos.com/v1:ServiceMonitor";
const RULE = "kubernetes:monitoring.coreos.com/v1:PrometheusRule";
const SVC = "kubernetes:core/v1:Service";
const DS = "kubernetes:apps/v1:DaemonSet";
const DEPLOYMENT = "kubernetes:apps/v1:Deployment";

const args = lvmSystemUnderMocks();

describe("LvmSystem monitoring", () => {
  test("none by default", async () => {
    const recorded = await runProgram(() => new LvmSystem("lvm", args()));
    expect(recorded.filter((r) => r.type.includes("monitoring.coreos.com"))).toEqual([]);
    expect(recorded.filter((r) => r.type === SVC && r.name.endsWith("-metrics-service"))).toEqual([]);
  });

  test("serviceMonitor: a Service selecting the agent pods and the operator pod, each with a ServiceMonitor setting the rules' job", async () => {
    const recorded = await runProgram(
      () => new LvmSystem("lvm", args({ monitoring: { serviceMonitor: true, labels: { release: "kps" } } })),
    );
    const agentPod = find(recorded, DS, "lvm-agent").inputs.spec.template;
    const operatorPod = find(recorded, DEPLOYMENT, "lvm-operator").inputs.spec.template;
    const agentSvc = find(recorded, SVC, "lvm-agent-metrics-service").inputs;
    expect(agentSvc.spec.selector).toEqual(agentPod.metadata.labels);
    expect(agentSvc.spec.ports).toEqual([{ name: "metrics", port: 8080, targetPort: 8080, protocol: "TCP" }]);
    const operatorSvc = find(recorded, SVC, "lvm-operator-metrics-service").inputs;
    expect(operatorSvc.spec.selector).toEqual(operatorPod.metadata.labels);
    const agentMon = find(recorded, CR, "lvm-agent-metrics-servicemonitor").inputs;
    expect(agentMon.metadata).toEqual({
      name: "lvm-agent-metrics",
      namespace: "lvm-system",
      labels: { release: "kps" },
    });
    expect(agentMon.spec.selector.matchLabels).toEqual({ "pulumi-lvm.dev/metrics": "pulumi-lvm-agent" });
    expect(agentSvc.metadata.labels["pulumi-lvm.dev/metrics"]).toBe("pulumi-lvm-agent");
    // the agents serve TLS by default
    expect(agentMon.spec.endpoints[0]).toMatchObject({ port: "metrics", scheme: "https" });
    expect(agentMon.spec.endpoints[0].relabelings[0]).toEqual({
      targetLabel: "job",
      replacement: "pulumi-lvm-agent",
    });
    const operatorMon = find(recorded, CR, "lvm-operator-metrics-servicemonitor").inputs;
    expect(operatorMon.spec.endpoints[0]).toMatchObject({ scheme: "http" });
    expect(operatorMon.spec.endpoints[0].relabelings[0]).toEqual({
      targetLabel: "job",
      replacement: "pulumi-lvm-operator",
    });
    expect(recorded.filter((r) => r.type === RULE)).toEqual([]);
  });

  test("rules: the PrometheusRule is the generated rule file's groups; thresholds change it", async () => {
    const recorded = await runProgram(() => new LvmSystem("lvm", args({ monitoring: { rules: true } })));
    const rule = find(recorded, RULE, "lvm-agent-rules-prometheusrule").inputs;
    const file = YAML.parse(fs.readFileSync(path.join(__dirname, "../..", RULES_FILE), "utf8"));
    expect(rule.spec).toEqual(file);
    const custom = await runProgram(
      () =>
        new LvmSystem(
          "lvm",
          args({
            monitoring: { rules: true, thresholds: { thinPoolWarningPercent: 60, nodeNotReadyMinutes: 30 } },
          }),
        ),
    );
    const alerts = find(custom, RULE, "lvm-agent-rules-prometheusrule").inputs.spec.groups[1].rules;
    expect(alerts.find((r: { alert: string }) => r.alert === "LvmThinPoolDataWarning").expr).toBe(
      "pulumi_lvm_agent_thin_pool_data_usage_ratio >= 0.6",
    );
    expect(alerts.find((r: { alert: string }) => r.alert === "LvmNodeNotReady").for).toBe("30m");
  });

  test("thresholds that cannot work are refused, naming the field", async () => {
    const { error, registered } = await runFailingProgram(
      () =>
        new LvmSystem(
          "lvm",
          args({ monitoring: { rules: true, thresholds: { thinPoolWarningPercent: 90 } } }),
        ),
    );
    expect(registered).toBe(0);
    expect(error.message).toContain(
      "args.monitoring.thresholds.thinPoolWarningPercent: thinPoolWarningPercent (90) must be below thinPoolCriticalPercent (85)",
    );
  });
});
