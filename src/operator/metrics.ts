import type { Counter, Histogram, Registry } from "../metrics/prometheus";
import { RegistryMetrics } from "../metrics/registry-metrics";
import type { RequestRecord } from "../kube/client";
import type { ReconcileResult } from "./nodeset/reconciler";

/** The gauges read at scrape time: the LVMNodeSet queue's depth; the LVMNode queue and LVMNodes by state when the operator drives agents. */
interface Gauges {
  readonly queueDepth: number;
  readonly lvmNodes?: {
    readonly queueDepth: number;
    readonly byState: Readonly<Record<string, number>>;
    /** The LVMNodes whose plan waits for approval (status.pendingApproval). */
    readonly awaitingApproval?: ReadonlyArray<{ readonly namespace: string; readonly name: string }>;
  };
}

/**
 * The operator's metrics (prom-client, one registry per process): reconciles by result, their
 * duration, the work queues' depth and the LVMNodes by state (read at scrape time), API requests by
 * verb, resource and code, watch restarts by reason, and the calls to the node agents.
 */
export class OperatorMetrics extends RegistryMetrics {
  readonly reconciles: Counter<"result">;
  readonly reconcileSeconds: Histogram;
  readonly apiRequests: Counter<"verb" | "resource" | "code">;
  readonly watchRestarts: Counter<"resource" | "reason">;
  readonly lvmNodeReconciles: Counter<"result">;
  readonly agentCalls: Counter<"call" | "result">;
  readonly agentCallSeconds: Histogram<"call">;
  readonly admissionReviews: Counter<"kind" | "result">;
  readonly admissionSeconds: Histogram<"kind">;
  private gauges: Gauges = { queueDepth: 0 };

  constructor(registry?: Registry) {
    super(registry);
    this.scrapeGauge(
      "pulumi_lvm_operator_queue_depth",
      "LVMNodeSet keys waiting to be reconciled.",
      [],
      () => [[{}, this.gauges.queueDepth]],
    );
    this.scrapeGauge(
      "pulumi_lvm_operator_lvmnode_queue_depth",
      "LVMNode keys waiting to be reconciled.",
      [],
      () => (this.gauges.lvmNodes ? [[{}, this.gauges.lvmNodes.queueDepth]] : []),
    );
    this.scrapeGauge(
      "pulumi_lvm_operator_lvmnodes",
      "LVMNodes by status.state (None: no status yet).",
      ["state"],
      () =>
        Object.entries(this.gauges.lvmNodes?.byState ?? {})
          .sort(([a], [b]) => (a < b ? -1 : 1))
          .map(([state, n]) => [{ state }, n] as const),
    );
    this.scrapeGauge(
      "pulumi_lvm_lvmnode_awaiting_approval",
      "1 for each LVMNode whose plan waits for approval (the LvmApprovalPendingTooLong alert).",
      ["namespace", "lvmnode"],
      () =>
        (this.gauges.lvmNodes?.awaitingApproval ?? []).map(
          (n) => [{ namespace: n.namespace, lvmnode: n.name }, 1] as const,
        ),
    );
    this.lvmNodeReconciles = this.counter(
      "pulumi_lvm_operator_lvmnode_reconciles_total",
      "LVMNode reconciles (driving the node agents) by result (changed, in_sync, not_found, error).",
      ["result"],
    );
    this.agentCalls = this.counter(
      "pulumi_lvm_operator_agent_calls_total",
      "Calls to the node agents by call (plan, apply, status, teardown) and result (ok, conflict, error, unreachable, aborted).",
      ["call", "result"],
    );
    this.agentCallSeconds = this.durationHistogram(
      "pulumi_lvm_operator_agent_call_duration_seconds",
      "Duration of calls to the node agents, by call.",
      ["call"],
    );
    this.admissionReviews = this.counter(
      "pulumi_lvm_operator_admission_reviews_total",
      "Admission reviews answered by the webhook, by kind and result (allowed, refused, error).",
      ["kind", "result"],
    );
    this.admissionSeconds = this.durationHistogram(
      "pulumi_lvm_operator_admission_duration_seconds",
      "Time from an AdmissionReview's body to its answer (the cluster reads included), by kind.",
      ["kind"],
    );
    this.reconciles = this.counter(
      "pulumi_lvm_operator_reconciles_total",
      "LVMNodeSet reconciles by result (changed, in_sync, not_found, error).",
      ["result"],
    );
    this.reconcileSeconds = this.durationHistogram(
      "pulumi_lvm_operator_reconcile_duration_seconds",
      "Duration of LVMNodeSet reconciles.",
      [],
    );
    this.apiRequests = this.counter(
      "pulumi_lvm_operator_api_requests_total",
      "Requests to the API server by verb, resource and HTTP code (0: no answer).",
      ["verb", "resource", "code"],
    );
    this.watchRestarts = this.counter(
      "pulumi_lvm_operator_watch_restarts_total",
      "Watches started again, by resource and reason (closed, expired, error).",
      ["resource", "reason"],
    );
  }

  recordAgentCall(call: string, result: string, seconds: number): void {
    this.agentCalls.inc({ call, result });
    this.agentCallSeconds.observe({ call }, seconds);
  }

  recordAdmission(kind: string, allowed: boolean | "error", seconds: number): void {
    this.admissionReviews.inc({
      kind,
      result: allowed === "error" ? "error" : allowed ? "allowed" : "refused",
    });
    this.admissionSeconds.observe({ kind }, seconds);
  }

  recordReconcile(result: ReconcileResult, seconds: number): void {
    this.reconciles.inc({ result });
    this.reconcileSeconds.observe(seconds);
  }

  recordRequest(r: RequestRecord): void {
    this.apiRequests.inc({ verb: r.verb, resource: r.resource, code: String(r.status) });
  }

  /**
   * The exposition text of the registry; `queueDepth` is the set work queue's length now;
   * `lvmNodes` (when the operator drives the agents) the LVMNode queue's length and the LVMNodes by
   * status.state.
   */
  async render(queueDepth: number, lvmNodes?: Gauges["lvmNodes"]): Promise<string> {
    this.gauges = { queueDepth, ...(lvmNodes ? { lvmNodes } : {}) };
    return this.exposition();
  }
}
