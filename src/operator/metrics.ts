import { Counter, Histogram } from "../metrics/prometheus";
import type { RequestRecord } from "../kube/client";
import type { ReconcileResult } from "./reconciler";

/**
 * The operator's metrics in the Prometheus text format (0.0.4), with the shared counter and
 * histogram types (src/metrics): reconciles by result, their duration, the work queue's depth (read at scrape
 * time), API requests by verb, resource and code, and watch restarts by reason.
 */
export class OperatorMetrics {
  readonly reconciles = new Counter(
    "pulumi_lvm_operator_reconciles_total",
    "LVMNodeSet reconciles by result (changed, in_sync, not_found, error).",
  );
  readonly reconcileSeconds = new Histogram(
    "pulumi_lvm_operator_reconcile_duration_seconds",
    "Duration of LVMNodeSet reconciles.",
  );
  readonly apiRequests = new Counter(
    "pulumi_lvm_operator_api_requests_total",
    "Requests to the API server by verb, resource and HTTP code (0: no answer).",
  );
  readonly watchRestarts = new Counter(
    "pulumi_lvm_operator_watch_restarts_total",
    "Watches started again, by resource and reason (closed, expired, error).",
  );

  readonly lvmNodeReconciles = new Counter(
    "pulumi_lvm_operator_lvmnode_reconciles_total",
    "LVMNode reconciles (driving the node agents) by result (changed, in_sync, not_found, error).",
  );
  readonly agentCalls = new Counter(
    "pulumi_lvm_operator_agent_calls_total",
    "Calls to the node agents by call (plan, apply, status, teardown) and result (ok, conflict, error, unreachable, aborted).",
  );
  readonly agentCallSeconds = new Histogram(
    "pulumi_lvm_operator_agent_call_duration_seconds",
    "Duration of calls to the node agents, by call.",
  );

  recordAgentCall(call: string, result: string, seconds: number): void {
    this.agentCalls.inc({ call, result });
    this.agentCallSeconds.observe({ call }, seconds);
  }

  recordReconcile(result: ReconcileResult, seconds: number): void {
    this.reconciles.inc({ result });
    this.reconcileSeconds.observe({}, seconds);
  }

  recordRequest(r: RequestRecord): void {
    this.apiRequests.inc({ verb: r.verb, resource: r.resource, code: String(r.status) });
  }

  /**
   * The exposition text; `queueDepth` is the set work queue's length now; `lvmNodes` (when the
   * operator drives the agents) the LVMNode queue's length and the LVMNodes by status.state.
   */
  render(
    queueDepth: number,
    lvmNodes?: { readonly queueDepth: number; readonly byState: Readonly<Record<string, number>> },
  ): string {
    const out = [
      "# HELP pulumi_lvm_operator_queue_depth LVMNodeSet keys waiting to be reconciled.",
      "# TYPE pulumi_lvm_operator_queue_depth gauge",
      `pulumi_lvm_operator_queue_depth ${queueDepth}`,
    ];
    if (lvmNodes) {
      out.push(
        "# HELP pulumi_lvm_operator_lvmnode_queue_depth LVMNode keys waiting to be reconciled.",
        "# TYPE pulumi_lvm_operator_lvmnode_queue_depth gauge",
        `pulumi_lvm_operator_lvmnode_queue_depth ${lvmNodes.queueDepth}`,
        "# HELP pulumi_lvm_operator_lvmnodes LVMNodes by status.state (None: no status yet).",
        "# TYPE pulumi_lvm_operator_lvmnodes gauge",
        ...Object.entries(lvmNodes.byState)
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([state, n]) => `pulumi_lvm_operator_lvmnodes{state="${state}"} ${n}`),
      );
      for (const m of [this.lvmNodeReconciles, this.agentCalls, this.agentCallSeconds]) m.render(out);
    }
    for (const m of [this.reconciles, this.reconcileSeconds, this.apiRequests, this.watchRestarts])
      m.render(out);
    return `${out.join("\n")}\n`;
  }
}
