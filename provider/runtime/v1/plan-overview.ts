import type { PlanSummary } from "./plan-summary";

/**
 * The preview's first read at fleet size: one line per node that has something to say (steps to
 * run, blocked entries), and the nodes that have nothing to do folded into one line each for
 * "converged" and "not selected", naming them. At 50+ nodes the per-node `plans` (every device,
 * every step) are still there for review and for apply's hash, but this list is what fits on a
 * screen. Pure; the order is stable (work first, by node name; then the folded lines).
 */
export function planOverview(plans: Readonly<Record<string, PlanSummary>>): string[] {
  const nodes = Object.keys(plans).sort((a, b) => a.localeCompare(b));
  const lines: string[] = [];
  const converged: string[] = [];
  const unselected: string[] = [];
  for (const node of nodes) {
    const p = plans[node]!;
    if (!p.selected) unselected.push(node);
    else if (p.steps === 0 && p.blocked.length === 0) converged.push(node);
    else lines.push(`${node}: ${nodeLine(p)}`);
  }
  if (converged.length) lines.push(`${count(converged.length, "node")} converged: ${converged.join(", ")}`);
  if (unselected.length)
    lines.push(`${count(unselected.length, "node")} not selected: ${unselected.join(", ")}`);
  return lines;
}

/** "3 steps (claims 2, extends 1, wipes 1), 4 excluded, 1 blocked"; only the counts that are not 0. */
export function nodeLine(p: PlanSummary): string {
  const devices = [
    ["claims", p.claimed.length],
    ["extends", p.extended.length],
    ["removes", p.removed.length],
    ["wipes", p.wiped.length],
  ]
    .filter(([, n]) => n)
    .map(([what, n]) => `${what} ${n}`);
  const parts = [`${count(p.steps, "step")}${devices.length ? ` (${devices.join(", ")})` : ""}`];
  if (p.excluded.length) parts.push(`${p.excluded.length} excluded`);
  if (p.blocked.length) parts.push(`${p.blocked.length} blocked`);
  return parts.join(", ");
}

function count(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? "" : "s"}`;
}
