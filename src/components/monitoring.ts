import * as k8s from "@pulumi/kubernetes";
import { z } from "zod";
import {
  AGENT_JOB,
  DEFAULT_THRESHOLDS,
  OPERATOR_JOB,
  prometheusRuleSpec,
  type MonitoringThresholds,
} from "../metrics/alert-rules";
import { labels as labelsSchema } from "./validate-args";
import type { WorkloadContext } from "./workload-context";

/** Thresholds of the alerts; each left out keeps its default. */
export interface MonitoringThresholdSettings {
  /** Thin pool data or metadata use, in percent, for the warning alerts. @default 75 */
  readonly thinPoolWarningPercent?: number;
  /** ... for the critical alerts. @default 85 */
  readonly thinPoolCriticalPercent?: number;
  /** Free space of a volume group without a thin pool, in percent, below which it alerts. @default 10 */
  readonly volumeGroupFreePercent?: number;
  /** Minutes an LVMNode may be not Ready before it alerts. @default 10 */
  readonly nodeNotReadyMinutes?: number;
  /** Minutes a plan may wait for approval before it alerts. @default 60 */
  readonly approvalPendingMinutes?: number;
}

/** Prometheus Operator objects for the agents and the operator (docs/components.md, "Monitoring"). */
export interface MonitoringSettings {
  /**
   * ServiceMonitors (and the Services they select) scraping the agents and the operator, with the
   * `job` labels the rules use. Needs the Prometheus Operator's CRDs in the cluster. @default false
   */
  readonly serviceMonitor?: boolean;
  /** A PrometheusRule with the alerts and the lvm_nodes_* recording rules. Needs the same CRDs. @default false */
  readonly rules?: boolean;
  /** @default the defaults of each threshold */
  readonly thresholds?: MonitoringThresholdSettings;
  /** Labels for the ServiceMonitors and the PrometheusRule (a Prometheus' ruleSelector / serviceMonitorSelector). @default {} */
  readonly labels?: Record<string, string>;
}

/** What the monitoring objects point at. */
export interface MonitoredSystem {
  readonly namespace: string;
  readonly agent: {
    readonly name: string;
    readonly labels: Record<string, string>;
    readonly port: number;
    readonly https: boolean;
  };
  readonly operator?: {
    readonly name: string;
    readonly labels: Record<string, string>;
    readonly port: number;
  };
}

const percent = z.number().gt(0).max(100);
const minutes = z.number().int().min(1);

/** The args check of `monitoring` (lvm-system-args.ts). */
export const monitoringSettingsSchema = z.strictObject({
  serviceMonitor: z.boolean().optional(),
  rules: z.boolean().optional(),
  thresholds: z
    .strictObject({
      thinPoolWarningPercent: percent.optional(),
      thinPoolCriticalPercent: percent.optional(),
      volumeGroupFreePercent: percent.optional(),
      nodeNotReadyMinutes: minutes.optional(),
      approvalPendingMinutes: minutes.optional(),
    })
    .superRefine((t, ctx) => {
      const { thinPoolWarningPercent: w, thinPoolCriticalPercent: c } = thresholdsOf(t);
      if (w >= c)
        ctx.addIssue({
          code: "custom",
          path: [
            t.thinPoolWarningPercent !== undefined ? "thinPoolWarningPercent" : "thinPoolCriticalPercent",
          ],
          message: `thinPoolWarningPercent (${w}) must be below thinPoolCriticalPercent (${c})`,
        });
    })
    .optional(),
  labels: labelsSchema.optional(),
});

/** The thresholds in effect: the settings', else the defaults (checked by monitoringSettingsSchema). */
export function thresholdsOf(s: MonitoringThresholdSettings | undefined): MonitoringThresholds {
  const given = Object.entries(s ?? {}).filter(([, v]) => v !== undefined);
  return { ...DEFAULT_THRESHOLDS, ...Object.fromEntries(given) };
}

export interface MonitoringManifest {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { name: string; namespace: string; labels?: Record<string, string> };
  readonly spec: Record<string, unknown>;
}

/**
 * The monitoring objects (pure): per target a headless Service and a ServiceMonitor; the
 * PrometheusRule. None without settings.
 */
export function monitoringManifests(
  system: MonitoredSystem,
  settings: MonitoringSettings = {},
): MonitoringManifest[] {
  const { namespace } = system;
  const labels = settings.labels ?? {};
  const out: MonitoringManifest[] = [];
  if (settings.serviceMonitor) {
    const targets = [
      {
        name: `${system.agent.name}-metrics`,
        job: AGENT_JOB,
        selector: system.agent.labels,
        port: system.agent.port,
        https: system.agent.https,
      },
      ...(system.operator
        ? [
            {
              name: `${system.operator.name}-metrics`,
              job: OPERATOR_JOB,
              selector: system.operator.labels,
              port: system.operator.port,
              https: false,
            },
          ]
        : []),
    ];
    for (const t of targets) {
      out.push({
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: t.name, namespace, labels: { ...t.selector, "pulumi-lvm.dev/metrics": t.job } },
        spec: {
          clusterIP: "None",
          selector: t.selector,
          ports: [{ name: "metrics", port: t.port, targetPort: t.port, protocol: "TCP" }],
        },
      });
      out.push({
        apiVersion: "monitoring.coreos.com/v1",
        kind: "ServiceMonitor",
        metadata: { name: t.name, namespace, labels },
        spec: {
          selector: { matchLabels: { "pulumi-lvm.dev/metrics": t.job } },
          namespaceSelector: { matchNames: [namespace] },
          endpoints: [
            {
              port: "metrics",
              path: "/metrics",
              interval: "30s",
              // The agents' serving certificates name their nodes, not the pod addresses Prometheus
              // dials; /metrics carries no secret, and only the monitoring namespaces may reach it.
              ...(t.https
                ? { scheme: "https", tlsConfig: { insecureSkipVerify: true } }
                : { scheme: "http" }),
              relabelings: [
                { targetLabel: "job", replacement: t.job },
                { sourceLabels: ["__meta_kubernetes_pod_node_name"], targetLabel: "node" },
              ],
            },
          ],
        },
      });
    }
  }
  if (settings.rules)
    out.push({
      apiVersion: "monitoring.coreos.com/v1",
      kind: "PrometheusRule",
      metadata: { name: `${system.agent.name}-rules`, namespace, labels },
      spec: prometheusRuleSpec(thresholdsOf(settings.thresholds)),
    });
  return out;
}

/** Creates monitoringManifests' objects as children of the system. */
export function monitoringResources(manifests: readonly MonitoringManifest[], at: WorkloadContext): void {
  for (const m of manifests) {
    const opts = { parent: at.parent, dependsOn: [at.namespace] };
    const name = `${m.metadata.name}-${m.kind.toLowerCase()}`;
    if (m.kind === "Service") new k8s.core.v1.Service(name, m as k8s.core.v1.ServiceArgs, opts);
    else new k8s.apiextensions.CustomResource(name, m, opts);
  }
}
