import type { Clock } from "../../kube/clock";
import type { KubeClient, KubeObject } from "../../kube/client";
import type { Resource } from "../../kube/resources";
import { microTime } from "../leader/lease";

/** events.k8s.io/v1 Events: what `kubectl describe` and `kubectl events` show. */
export const EVENTS: Resource = {
  group: "events.k8s.io",
  version: "v1",
  plural: "events",
  kind: "Event",
  namespaced: true,
};

/** The object an Event is about. */
export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  readonly metadata: { readonly name: string; readonly namespace?: string; readonly uid?: string };
}

/** One thing that happened, as a reconcile reports it. */
export interface EventInput {
  readonly regarding: EventSubject;
  readonly type: "Normal" | "Warning";
  /** CamelCase, e.g. ApplyFailed. */
  readonly reason: string;
  /** What the operator was doing, e.g. Apply. */
  readonly action: string;
  /** What a person should know; cut to the API's 1 kB. */
  readonly note: string;
}

export interface EventRecorderOptions {
  readonly kube: KubeClient;
  readonly clock: Clock;
  readonly log: (entry: Record<string, unknown>) => void;
  /** reportingController. @default "lvm.topolvm.io/operator" */
  readonly controller?: string;
  /** reportingInstance: this replica. */
  readonly instance: string;
  /** Events per object at once (client-go's spam filter: 25). */
  readonly burst?: number;
  /** One more event per object after this long (client-go: 5 min). */
  readonly refillMs?: number;
  /** An event repeated within this long joins a series (client-go's events library: 6 min). */
  readonly seriesWindowMs?: number;
  /** A series' count is written at most this often (client-go: 30 min). */
  readonly seriesFlushMs?: number;
}

const MAX_NOTE = 1024;
const MAX_CACHE = 4096;

interface Seen {
  /** The Event's name on the API server, once created. */
  name?: string;
  readonly namespace: string;
  count: number;
  /** The count last written (1 when only the Event itself is). */
  written: number;
  lastAt: number;
}

/**
 * Records Events the way client-go does, so that they say what happened without flooding the API
 * server: fire-and-forget (a reconcile never waits for or fails on an Event);
 *
 * - **series**: the same event (object, type, reason, action, note) again within 6 minutes is not
 *   a new Event: its second occurrence writes `series.count` 2 to the first, later ones only count
 *   in memory and are written at most every 30 minutes (events.k8s.io/v1 semantics);
 * - **spam filter**: per object, 25 at once, then one per 5 minutes (a token bucket); the rest are
 *   dropped (counted in `dropped`).
 *
 * The callers record on transitions only (a changed condition, an apply), so a resync that changes
 * nothing records nothing.
 */
export class EventRecorder {
  private readonly seen = new Map<string, Seen>();
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private readonly pending = new Set<Promise<void>>();
  private flushTimer: (() => void) | undefined;
  private sequence = 0;
  readonly stats = { created: 0, seriesWrites: 0, repeats: 0, dropped: 0, failed: 0 };

  constructor(private readonly o: EventRecorderOptions) {}

  record(e: EventInput): void {
    const now = this.o.clock.now();
    const key = JSON.stringify([
      e.regarding.metadata.namespace ?? "",
      e.regarding.kind,
      e.regarding.metadata.name,
      e.regarding.metadata.uid ?? "",
      e.type,
      e.reason,
      e.action,
      e.note,
    ]);
    const seen = this.seen.get(key);
    if (seen && now - seen.lastAt < (this.o.seriesWindowMs ?? 360_000)) {
      seen.count++;
      seen.lastAt = now;
      this.stats.repeats++;
      if (seen.written === 1) this.track(this.writeSeries(seen));
      else this.scheduleFlush();
      return;
    }
    if (
      !this.take(
        `${e.regarding.metadata.namespace ?? ""}/${e.regarding.kind}/${e.regarding.metadata.name}`,
        now,
      )
    ) {
      this.stats.dropped++;
      return;
    }
    const entry: Seen = {
      namespace: e.regarding.metadata.namespace ?? "default",
      count: 1,
      written: 1,
      lastAt: now,
    };
    this.remember(key, entry, now);
    this.track(this.create(e, entry, now));
  }

  /** Waits for the writes started so far (tests, and a stopping operator). */
  async flush(): Promise<void> {
    while (this.pending.size) await Promise.all([...this.pending]);
  }

  /** Stops the series timer. */
  close(): void {
    this.flushTimer?.();
    this.flushTimer = undefined;
  }

  private take(object: string, now: number): boolean {
    const burst = this.o.burst ?? 25;
    const refill = this.o.refillMs ?? 300_000;
    const b = this.buckets.get(object) ?? { tokens: burst, at: now };
    const tokens = Math.min(burst, b.tokens + Math.floor((now - b.at) / refill));
    const at = tokens === burst ? now : b.at + Math.floor((now - b.at) / refill) * refill;
    if (tokens < 1) {
      this.buckets.set(object, { tokens, at });
      return false;
    }
    this.buckets.set(object, { tokens: tokens - 1, at });
    return true;
  }

  private remember(key: string, entry: Seen, now: number): void {
    const window = this.o.seriesWindowMs ?? 360_000;
    if (this.seen.size >= MAX_CACHE)
      for (const [k, s] of this.seen)
        if (now - s.lastAt >= window || this.seen.size >= MAX_CACHE) this.seen.delete(k);
    this.seen.set(key, entry);
  }

  private track(p: Promise<void>): void {
    this.pending.add(p);
    void p.finally(() => this.pending.delete(p));
  }

  private async create(e: EventInput, entry: Seen, now: number): Promise<void> {
    // client-go's name: the object's, a dot, the time in hex (here ms and a sequence number).
    // A name of up to 253 characters (a Node's) is cut so that the Event's fits too, ending in a letter or digit.
    const suffix = (now * 1000 + (this.sequence++ % 1000)).toString(16);
    const stem = e.regarding.metadata.name.slice(0, 253 - 1 - suffix.length).replace(/[-.]+$/, "");
    const name = `${stem}.${suffix}`;
    try {
      await this.o.kube.create(EVENTS, entry.namespace, {
        apiVersion: "events.k8s.io/v1",
        kind: "Event",
        metadata: { name, namespace: entry.namespace },
        eventTime: microTime(now),
        reportingController: this.o.controller ?? "lvm.topolvm.io/operator",
        reportingInstance: this.o.instance.slice(0, 128),
        action: e.action,
        reason: e.reason,
        type: e.type,
        note: cut(e.note),
        regarding: {
          apiVersion: e.regarding.apiVersion,
          kind: e.regarding.kind,
          name: e.regarding.metadata.name,
          ...(e.regarding.metadata.namespace ? { namespace: e.regarding.metadata.namespace } : {}),
          ...(e.regarding.metadata.uid ? { uid: e.regarding.metadata.uid } : {}),
        },
      } as KubeObject);
      entry.name = name;
      this.stats.created++;
      // Repeats that came while it was being created.
      if (entry.count > 1) await this.writeSeries(entry);
    } catch (err) {
      this.stats.failed++;
      this.o.log({ msg: "event not recorded", reason: e.reason, error: (err as Error).message });
    }
  }

  private async writeSeries(entry: Seen): Promise<void> {
    if (!entry.name || entry.written === entry.count) return;
    const count = entry.count;
    entry.written = count;
    try {
      await this.o.kube.patch(EVENTS, entry.namespace, entry.name, {
        series: { count, lastObservedTime: microTime(entry.lastAt) },
      });
      this.stats.seriesWrites++;
    } catch (err) {
      this.stats.failed++;
      this.o.log({ msg: "event series not recorded", event: entry.name, error: (err as Error).message });
    }
  }

  private scheduleFlush(): void {
    if (this.flushTimer) return;
    this.flushTimer = this.o.clock.setTimer(this.o.seriesFlushMs ?? 1_800_000, () => {
      this.flushTimer = undefined;
      for (const s of this.seen.values()) if (s.count !== s.written) this.track(this.writeSeries(s));
    });
  }
}

function cut(note: string): string {
  if (Buffer.byteLength(note) <= MAX_NOTE) return note;
  let out = note.slice(0, MAX_NOTE - 3);
  while (Buffer.byteLength(out) > MAX_NOTE - 3) out = out.slice(0, -1);
  return `${out}...`;
}
