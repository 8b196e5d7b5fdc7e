import { randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import { hostname } from "node:os";
import type { Clock } from "../../kube/clock";
import type { KubeClient } from "../../kube/client";
import { scrapeGauge, type Registry } from "../../metrics/prometheus";
import { PACKAGE_VERSION } from "../../version";
import { OperatorConfigError, type OperatorConfig } from "../config";
import { LeaderElector } from "./elector";

/** Where a pod finds its own namespace. */
export const POD_NAMESPACE_FILE = "/var/run/secrets/kubernetes.io/serviceaccount/namespace";

/** This replica's identity: the flag's, else hostname (the pod's name) + "_" + a random UUID, as client-go. */
export function replicaIdentity(config: OperatorConfig): string {
  return config.leaderElection?.identity ?? `${hostname()}_${randomUUID()}`;
}

/** The User-Agent of this replica's API requests: audit logs say which replica wrote what. */
export function operatorUserAgent(identity: string): string {
  return `pulumi-lvm-operator/${PACKAGE_VERSION} (${identity})`;
}

/**
 * The elector the configuration asks for (--leader-elect), on the ungated client: the Lease is in
 * --leader-election-namespace, else the pod's own namespace. undefined: one replica, always leads.
 */
export function leaderElectorFor(
  config: OperatorConfig,
  deps: {
    readonly kube: KubeClient;
    readonly clock: Clock;
    readonly log: (entry: Record<string, unknown>) => void;
    readonly identity: string;
    readonly podNamespace?: () => string | undefined;
  },
): LeaderElector | undefined {
  const le = config.leaderElection;
  if (!le) return undefined;
  const namespace = le.namespace ?? (deps.podNamespace ?? readPodNamespace)();
  if (!namespace)
    throw new OperatorConfigError([
      {
        path: "--leader-election-namespace",
        message: `not given, and ${POD_NAMESPACE_FILE} (a pod's own namespace) cannot be read: give the Lease's namespace`,
      },
    ]);
  return new LeaderElector({
    kube: deps.kube,
    clock: deps.clock,
    log: deps.log,
    namespace,
    name: le.name,
    identity: deps.identity,
    leaseDurationMs: le.leaseDurationMs,
    renewDeadlineMs: le.renewDeadlineMs,
    retryPeriodMs: le.retryPeriodMs,
  });
}

function readPodNamespace(): string | undefined {
  try {
    return readFileSync(POD_NAMESPACE_FILE, "utf8").trim() || undefined;
  } catch {
    return undefined;
  }
}

/**
 * Who leads, in `registry` (read at scrape time): `pulumi_lvm_operator_leader{identity}` 1 on the
 * replica that holds the Lease and reconciles (always 1 without leader election), 0 on a standby;
 * and `pulumi_lvm_operator_lease_holder{holder}` 1, the holder as this replica last read the Lease.
 */
export function registerLeaderMetrics(
  registry: Registry,
  elector: LeaderElector | undefined,
  identity: string,
): void {
  scrapeGauge(
    registry,
    "pulumi_lvm_operator_leader",
    "1 when this replica holds the leader Lease (or runs without leader election) and reconciles; 0 on a standby.",
    ["identity"],
    () => [[{ identity }, !elector || elector.isLeader() ? 1 : 0]],
  );
  if (elector)
    scrapeGauge(
      registry,
      "pulumi_lvm_operator_lease_holder",
      "The holder of the leader Lease as this replica last read it (holder empty: free or unknown).",
      ["holder"],
      () => [[{ holder: elector.holder() }, 1]],
    );
}
