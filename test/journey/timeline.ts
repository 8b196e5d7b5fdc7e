/**
 * Where a slow `pulumi up` spent its minutes, read from the cluster afterwards: when each object of
 * a namespace was created, when each pod was scheduled, started and became ready, and the events
 * that mean waiting (a volume that could not mount, a back-off, a failed probe), as seconds from
 * the step's start. The journey prints it after its first up, so a slow CI run says which object
 * waited for which, not only that the step was slow.
 */
import type { ControlPlane, Json } from "../env/cluster";
import { get } from "../cluster/objects";

const KINDS = [
  ["apps/v1", "deployments"],
  ["apps/v1", "daemonsets"],
  ["apps/v1", "statefulsets"],
  ["v1", "secrets"],
  ["v1", "pods"],
  ["lvm.topolvm.io/v2alpha1", "lvmnodesets"],
] as const;
/** Event reasons that mean something waited. */
const WAITING = /FailedMount|BackOff|Unhealthy|FailedScheduling|FailedCreate|Killing/;

const at = (t: string | undefined, t0: number) =>
  t ? `${String(Math.round((Date.parse(t) - t0) / 1000)).padStart(5)} s` : "      -";

/** One line per object and pod milestone, and per waiting event (with its count), in time order. */
export async function timeline(cp: ControlPlane, namespaces: readonly string[], t0: number): Promise<string> {
  const rows: [string, string][] = [];
  const add = (t: string | undefined, what: string) => {
    if (t) rows.push([t, `${at(t, t0)}  ${what}`]);
  };
  for (const ns of namespaces) {
    for (const [group, plural] of KINDS) {
      const base = group.includes("/") ? `/apis/${group}` : `/api/${group}`;
      const items = ((await get(cp, `${base}/namespaces/${ns}/${plural}`))?.items ?? []) as Json[];
      for (const o of items) {
        const name = `${plural.replace(/s$/, "")} ${ns}/${o.metadata.name}`;
        add(o.metadata.creationTimestamp, `created  ${name}`);
        if (plural !== "pods") continue;
        const cond = (type: string) =>
          ((o.status?.conditions ?? []) as Json[]).find((c) => c.type === type)?.lastTransitionTime;
        add(cond("PodScheduled"), `scheduled ${name}`);
        for (const c of (o.status?.containerStatuses ?? []) as Json[])
          add(c.state?.running?.startedAt, `started  ${name} ${c.name} (restarts ${c.restartCount})`);
        add(cond("Ready"), `ready    ${name}`);
      }
    }
    const events = ((await get(cp, `/api/v1/namespaces/${ns}/events`))?.items ?? []) as Json[];
    for (const e of events.filter((x) => WAITING.test(x.reason ?? "")))
      add(
        e.firstTimestamp ?? e.eventTime,
        `event    ${ns}/${e.involvedObject?.name} ${e.reason} ×${e.count ?? 1} (last ${at(e.lastTimestamp, t0).trim()}): ${String(e.message).slice(0, 160)}`,
      );
  }
  return rows
    .sort((a, b) => Date.parse(a[0]) - Date.parse(b[0]))
    .map(([, line]) => line)
    .join("\n");
}
