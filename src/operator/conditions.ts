import type { Condition } from "../api";

/** A condition as a reconcile computes it; the transition time is filled in by setCondition. */
export type DesiredCondition = Omit<Condition, "lastTransitionTime">;

/** RFC 3339 in whole seconds, as metav1.Time serialises. */
export function rfc3339(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/**
 * `conditions` with `next` set (KEP-1623): lastTransitionTime moves to `now` only when the status
 * changes; reason, message and observedGeneration always follow `next`. Conditions of other types
 * stay as they are, in place.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  next: DesiredCondition,
  now: number,
): Condition[] {
  const list = [...(conditions ?? [])];
  const i = list.findIndex((c) => c.type === next.type);
  const previous = i >= 0 ? list[i] : undefined;
  const lastTransitionTime =
    previous && previous.status === next.status ? previous.lastTransitionTime : rfc3339(now);
  const condition: Condition = { ...next, lastTransitionTime };
  if (i >= 0) list[i] = condition;
  else list.push(condition);
  return list;
}
