import { OperatorMetrics } from "./metrics";

describe("OperatorMetrics", () => {
  it("pulumi_lvm_lvmnode_awaiting_approval: 1 per LVMNode whose plan waits, none without", async () => {
    const m = new OperatorMetrics();
    expect(await m.render(0, { queueDepth: 0, byState: {} })).not.toMatch(
      /^pulumi_lvm_lvmnode_awaiting_approval\{/m,
    );
    const text = await m.render(0, {
      queueDepth: 0,
      byState: {},
      awaitingApproval: [{ namespace: "storage", name: "node-1" }],
    });
    expect(text).toContain('pulumi_lvm_lvmnode_awaiting_approval{namespace="storage",lvmnode="node-1"} 1\n');
  });

  it("reads the queue depths and LVMNodes by state at scrape time", async () => {
    const m = new OperatorMetrics();
    m.recordReconcile("changed", 0.2);
    m.recordRequest({ verb: "LIST", resource: "nodes", status: 200, durationMs: 5 });
    let text = await m.render(3);
    expect(text).toContain("\npulumi_lvm_operator_queue_depth 3\n");
    expect(text).toContain('pulumi_lvm_operator_reconciles_total{result="changed"} 1\n');
    expect(text).toContain(
      'pulumi_lvm_operator_api_requests_total{verb="LIST",resource="nodes",code="200"} 1\n',
    );
    expect(text).toContain("pulumi_lvm_operator_reconcile_duration_seconds_count 1\n");
    // without agents: no LVMNode samples
    expect(text).not.toMatch(/^pulumi_lvm_operator_lvmnode(s|_queue_depth)[{ ]/m);
    text = await m.render(0, { queueDepth: 2, byState: { Ready: 4, None: 1 } });
    expect(text).toContain("\npulumi_lvm_operator_queue_depth 0\n");
    expect(text).toContain("\npulumi_lvm_operator_lvmnode_queue_depth 2\n");
    expect(text).toContain(
      'pulumi_lvm_operator_lvmnodes{state="None"} 1\npulumi_lvm_operator_lvmnodes{state="Ready"} 4\n',
    );
  });
});
