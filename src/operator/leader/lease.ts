import type { KubeObject } from "../../kube/client";
import type { Resource } from "../../kube/resources";

/** coordination.k8s.io/v1 Lease, the lock client-go's leader election uses too. */
export const LEASES: Resource = {
  group: "coordination.k8s.io",
  version: "v1",
  plural: "leases",
  kind: "Lease",
  namespaced: true,
};

/** The Lease's spec: who holds it, since when, until when (as client-go writes it). */
export interface LeaseSpec {
  readonly holderIdentity?: string;
  readonly leaseDurationSeconds?: number;
  readonly acquireTime?: string;
  readonly renewTime?: string;
  readonly leaseTransitions?: number;
}

export type LeaseObject = KubeObject & { readonly spec?: LeaseSpec };

/** metav1.MicroTime: RFC 3339 with microseconds. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/**
 * What a replica does with the Lease it just read (pure; client-go's tryAcquireOrRenew):
 *
 * - held by another identity whose record this replica has seen unchanged for less than the
 *   record's leaseDurationSeconds (measured on this replica's own monotonic clock, from when it
 *   first saw that record, never from the record's renewTime: clocks of two machines differ, and
 *   a wall clock steps): wait;
 * - otherwise (free, released with an empty holder, expired, or already ours): write a record
 *   naming this replica; acquireTime and leaseTransitions move only when the holder changes.
 */
export function nextLease(input: {
  readonly current: LeaseSpec;
  /** When this replica first saw `current` unchanged (its monotonic clock, ms). */
  readonly observedAt: number;
  /** Now on the same monotonic clock as observedAt. */
  readonly now: number;
  /** Now on the wall clock (ms since the epoch): only for the record's acquireTime and renewTime. */
  readonly wallNow: number;
  readonly identity: string;
  readonly leaseDurationMs: number;
}): { readonly take: false; readonly holder: string } | { readonly take: true; readonly spec: LeaseSpec } {
  const { current, observedAt, now, wallNow, identity } = input;
  const holder = current.holderIdentity ?? "";
  const durationMs = (current.leaseDurationSeconds ?? 0) * 1000;
  if (holder && holder !== identity && observedAt + durationMs > now) return { take: false, holder };
  const ours = holder === identity;
  return {
    take: true,
    spec: {
      holderIdentity: identity,
      leaseDurationSeconds: Math.ceil(input.leaseDurationMs / 1000),
      acquireTime: ours && current.acquireTime ? current.acquireTime : microTime(wallNow),
      renewTime: microTime(wallNow),
      leaseTransitions: ours ? (current.leaseTransitions ?? 0) : (current.leaseTransitions ?? -1) + 1,
    },
  };
}

/** The record a leader writes when it lets go (client-go's ReleaseOnCancel): no holder, expires at once. */
export function releasedLease(current: LeaseSpec, now: number): LeaseSpec {
  return {
    holderIdentity: "",
    leaseDurationSeconds: 1,
    acquireTime: microTime(now),
    renewTime: microTime(now),
    leaseTransitions: current.leaseTransitions ?? 0,
  };
}
