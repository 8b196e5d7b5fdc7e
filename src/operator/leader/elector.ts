import { sleep, type Clock } from "../../kube/clock";
import type { KubeClient } from "../../kube/client";
import { KubeApiError } from "../../kube/errors";
import { jsonEqual } from "../../kube/json-equal";
import { LEASES, nextLease, releasedLease, type LeaseObject, type LeaseSpec } from "./lease";

export interface LeaderElectionOptions {
  readonly kube: KubeClient;
  readonly clock: Clock;
  readonly log: (entry: Record<string, unknown>) => void;
  /** The Lease: `namespace/name`. */
  readonly namespace: string;
  readonly name: string;
  /** This replica, unique among all replicas ever (client-go: hostname + "_" + a UUID). */
  readonly identity: string;
  /** How long a Lease holds without a renewal. @default 15000 (client-go's) */
  readonly leaseDurationMs?: number;
  /** A leader that has not renewed for this long stops leading. @default 10000 */
  readonly renewDeadlineMs?: number;
  /** Between two tries (to acquire, or to renew). @default 2000 */
  readonly retryPeriodMs?: number;
  /** Jitter of the acquire tries, a fraction of retryPeriodMs. @default 0.2 */
  readonly jitter?: number;
  /** @default Math.random */
  readonly random?: () => number;
}

export type TermEnd = "stopped" | "lost";

/**
 * Leader election on a coordination.k8s.io/v1 Lease with client-go's semantics (lease 15 s, renew
 * deadline 10 s, retry 2 s):
 *
 * - a standby tries every retry period (plus jitter) and takes the Lease when it is free, released,
 *   or has not changed for its leaseDurationSeconds as this replica's own clock measures it;
 * - the leader renews every retry period. **It leads only while its last successful renewal was
 *   sent less than renewDeadline ago** (`isLeader()`, read by the write gate before every write):
 *   a standby can take the Lease no earlier than leaseDuration after it saw that renewal, which
 *   was written after it was sent, so the leader stops (at renewDeadline, timer-driven: a renewal
 *   that hangs does not delay it) at least leaseDuration − renewDeadline before another can lead;
 * - every duration and deadline is measured on the monotonic clock (`clock.monotonic()`), as
 *   client-go does: a wall clock stepped back (NTP, a resumed VM) must not stretch the term; the
 *   wall clock only stamps the Lease's acquireTime and renewTime;
 * - on stop (SIGTERM) the term ends: `lead`'s signal aborts, the Lease is renewed until `lead`
 *   has finished (an apply in flight is waited for), then released (empty holder, 1 s), so a
 *   standby takes over at its next try instead of after leaseDuration.
 */
export class LeaderElector {
  private readonly leaseMs: number;
  private readonly renewDeadlineMs: number;
  private readonly retryMs: number;
  /** The Lease as last read, and when (this replica's monotonic clock) it was first seen so. */
  private observed: { spec: LeaseSpec; at: number } | undefined;
  /** Until when (monotonic clock) this replica may act as leader: its last renewal's send time + renewDeadline. */
  private leaderUntil = 0;
  private leading = false;
  private cancelWatchdog: (() => void) | undefined;
  /** Terms this replica has led; for metrics and logs. */
  transitions = 0;

  constructor(private readonly o: LeaderElectionOptions) {
    this.leaseMs = o.leaseDurationMs ?? 15_000;
    this.renewDeadlineMs = o.renewDeadlineMs ?? 10_000;
    this.retryMs = o.retryPeriodMs ?? 2_000;
    if (!(this.leaseMs > this.renewDeadlineMs && this.renewDeadlineMs > this.retryMs && this.retryMs > 0))
      throw new Error(
        `leader election needs lease duration > renew deadline > retry period > 0 (got ${this.leaseMs} ms, ${this.renewDeadlineMs} ms, ${this.retryMs} ms)`,
      );
  }

  get identity(): string {
    return this.o.identity;
  }

  /** Whether this replica may act as leader now: it holds the Lease and renewed it in time. */
  isLeader(): boolean {
    return this.leading && this.o.clock.monotonic() < this.leaderUntil;
  }

  /** The holder of the Lease as this replica last saw it ("" when free or unknown). */
  holder(): string {
    if (this.isLeader()) return this.o.identity;
    return this.observed?.spec.holderIdentity ?? "";
  }

  /**
   * Waits for the Lease, runs `lead` with a signal that aborts when the term ends (stop, or the
   * Lease lost), keeps renewing until `lead` has returned, then releases the Lease (on stop).
   * Resolves "stopped" (stop before or during the term) or "lost".
   */
  async run(stop: AbortSignal, lead: (signal: AbortSignal) => Promise<void>): Promise<TermEnd> {
    const random = this.o.random ?? Math.random;
    while (!stop.aborted) {
      if (await this.tryAcquireOrRenew()) break;
      await sleep(this.o.clock, this.retryMs * (1 + (this.o.jitter ?? 0.2) * random()), stop);
    }
    if (stop.aborted) return "stopped";

    this.transitions++;
    this.o.log({ msg: "leading", lease: `${this.o.namespace}/${this.o.name}`, identity: this.o.identity });
    const term = new AbortController();
    let lost = false;
    let lostNow: () => void = () => undefined;
    const lostSignal = new Promise<false>((resolve) => (lostNow = () => resolve(false)));
    this.termLost = false;
    const loseTerm = (why: string) => {
      if (lost) return;
      lost = true;
      lostNow();
      this.termLost = true;
      this.leading = false;
      this.o.log({ msg: "leader election lost; reconciling stops", why, identity: this.o.identity });
      term.abort();
    };
    this.onLost = loseTerm;
    this.armWatchdog();
    const onStop = () => term.abort();
    stop.addEventListener("abort", onStop, { once: true });
    let finished = false;
    const leading = lead(term.signal).finally(() => {
      finished = true;
    });
    const ended = leading.then(
      () => undefined,
      () => undefined,
    );
    try {
      while (!finished && !lost) {
        await Promise.race([sleep(this.o.clock, this.retryMs), ended]);
        if (finished || lost) break;
        // A renewal that hangs past the deadline does not hold the term up (the watchdog ends it).
        if (!(await Promise.race([this.tryAcquireOrRenew(), lostSignal])) && !this.isLeader())
          loseTerm("the Lease was not renewed in time");
      }
      await leading;
    } finally {
      stop.removeEventListener("abort", onStop);
      this.cancelWatchdog?.();
      this.onLost = undefined;
    }
    if (lost) return "lost";
    await this.release();
    return "stopped";
  }

  private onLost: ((why: string) => void) | undefined;
  private termLost = false;

  /** Ends the term at the renew deadline unless a renewal moved it. */
  private armWatchdog(): void {
    this.cancelWatchdog?.();
    const wait = Math.max(0, this.leaderUntil - this.o.clock.monotonic());
    this.cancelWatchdog = this.o.clock.setTimer(wait, () => {
      if (this.o.clock.monotonic() >= this.leaderUntil)
        this.onLost?.(`no renewal of the Lease within ${this.renewDeadlineMs} ms`);
      else this.armWatchdog();
    });
  }

  /** One try: read the Lease, take or renew it when allowed. True when this replica holds it now. */
  private async tryAcquireOrRenew(): Promise<boolean> {
    const sentAt = this.o.clock.monotonic();
    const { kube, namespace, name, identity } = this.o;
    try {
      const lease = await kube.get<LeaseObject>(LEASES, namespace, name);
      const now = this.o.clock.monotonic();
      const current = lease?.spec ?? {};
      if (!this.observed || !jsonEqual(this.observed.spec, current))
        this.observed = { spec: current, at: now };
      const next = nextLease({
        current,
        observedAt: this.observed.at,
        now,
        wallNow: this.o.clock.now(),
        identity,
        leaseDurationMs: this.leaseMs,
      });
      if (!next.take) {
        if (this.leading) this.onLost?.(`the Lease is held by ${next.holder}`);
        return false;
      }
      if (lease)
        await kube.patch(LEASES, namespace, name, {
          metadata: { resourceVersion: lease.metadata.resourceVersion },
          spec: next.spec,
        });
      else
        await kube.create<LeaseObject>(LEASES, namespace, {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name, namespace },
          spec: next.spec,
        } as LeaseObject);
      this.observed = { spec: next.spec, at: this.o.clock.monotonic() };
      // A renewal that hung past the deadline and then succeeded does not revive a lost term.
      if (this.termLost) return false;
      this.leading = true;
      this.leaderUntil = sentAt + this.renewDeadlineMs;
      if (this.onLost) this.armWatchdog();
      return true;
    } catch (e) {
      // 409: another replica wrote the Lease between our read and write; anything else: try again.
      if (!(e instanceof KubeApiError && e.status === 409))
        this.o.log({ msg: "leader election: Lease not read or written", error: (e as Error).message });
      return false;
    }
  }

  /** Lets go of the Lease, if this replica still holds it, so a standby need not wait for it to expire. */
  private async release(): Promise<void> {
    const { kube, namespace, name, identity } = this.o;
    const wasLeader = this.isLeader();
    this.leading = false;
    if (!wasLeader) return;
    try {
      const lease = await kube.get<LeaseObject>(LEASES, namespace, name);
      if (lease?.spec?.holderIdentity !== identity) return;
      await kube.patch(LEASES, namespace, name, {
        metadata: { resourceVersion: lease.metadata.resourceVersion },
        spec: releasedLease(lease.spec, this.o.clock.now()),
      });
      this.o.log({ msg: "Lease released", identity });
    } catch (e) {
      this.o.log({ msg: "Lease not released; it expires by itself", error: (e as Error).message });
    }
  }
}
