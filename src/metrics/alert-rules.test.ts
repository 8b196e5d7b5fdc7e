import { AgentMetrics } from "../agent/metrics";
import { OperatorMetrics } from "../operator/metrics";
import {
  DEFAULT_THRESHOLDS,
  metricNames,
  ruleGroups,
  type AlertRule,
  type RecordingRule,
} from "./alert-rules";

const rules = () => ruleGroups().flatMap((g) => g.rules);
const isAlert = (r: AlertRule | RecordingRule): r is AlertRule => "alert" in r;

test("every metric the rules read is exported by the agent's or the operator's metrics module", () => {
  // The registries themselves, not a list: a renamed or removed metric fails here.
  const exported = new Set(
    [new AgentMetrics(), new OperatorMetrics()].flatMap((m) =>
      m.registry.getMetricsAsArray().map((x) => x.name),
    ),
  );
  const recorded = new Set(rules().flatMap((r) => ("record" in r ? [r.record] : [])));
  const read = [...new Set(rules().flatMap((r) => metricNames(r.expr)))].sort();
  // `up` is Prometheus's own, one per scrape target.
  const missing = read.filter((n) => n !== "up" && !exported.has(n) && !recorded.has(n));
  expect(missing).toEqual([]);
  expect(read).toEqual([
    "pulumi_lvm_agent_operations_total",
    "pulumi_lvm_agent_thin_pool_data_usage_ratio",
    "pulumi_lvm_agent_thin_pool_metadata_usage_ratio",
    "pulumi_lvm_agent_volume_group_free_bytes",
    "pulumi_lvm_agent_volume_group_missing_physical_volumes",
    "pulumi_lvm_agent_volume_group_size_bytes",
    "pulumi_lvm_lvmnode_awaiting_approval",
    "pulumi_lvm_operator_lvmnodes",
    "up",
  ]);
});

test("metricNames reads metric names, not functions, keywords, label names or strings", () => {
  expect(
    metricNames(
      '(a_bytes / b_bytes{x="y z"} < 0.1) unless on(instance, vg) c_ratio or on() vector(0) and increase(d_total[15m]) > 0',
    ),
  ).toEqual(["a_bytes", "b_bytes", "c_ratio", "d_total"]);
});

test("the recording rules give the seed's lvm_nodes_{healthy,degraded,failed}", () => {
  expect(rules().flatMap((r) => ("record" in r ? [r.record] : []))).toEqual([
    "lvm_nodes_healthy",
    "lvm_nodes_degraded",
    "lvm_nodes_failed",
  ]);
});

test("thresholds go into the expressions and durations", () => {
  const custom = ruleGroups({
    ...DEFAULT_THRESHOLDS,
    thinPoolWarningPercent: 60,
    thinPoolCriticalPercent: 90,
    volumeGroupFreePercent: 20,
    nodeNotReadyMinutes: 30,
    approvalPendingMinutes: 15,
  })
    .flatMap((g) => g.rules)
    .filter(isAlert);
  const byName = Object.fromEntries(custom.map((r) => [r.alert, r]));
  expect(byName.LvmThinPoolDataWarning!.expr).toBe("pulumi_lvm_agent_thin_pool_data_usage_ratio >= 0.6");
  expect(byName.LvmThinPoolMetadataCritical!.expr).toBe(
    "pulumi_lvm_agent_thin_pool_metadata_usage_ratio >= 0.9",
  );
  expect(byName.LvmVolumeGroupFreeSpaceLow!.expr).toContain("< 0.2)");
  expect(byName.LvmNodeNotReady!.for).toBe("30m");
  expect(byName.LvmApprovalPendingTooLong!.for).toBe("15m");
});

test("each alert has a severity, a summary and a description", () => {
  for (const r of rules().filter(isAlert)) {
    expect(["warning", "critical"]).toContain(r.labels.severity);
    expect(r.annotations.summary.length).toBeGreaterThan(10);
    expect(r.annotations.description.length).toBeGreaterThan(20);
  }
});
