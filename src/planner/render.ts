import type { DeviceClaim, NodePlan, PlanAction, PlanDocument, ThinPoolPlan } from "./types";
import { formatSize } from "./units";
import { signatureText } from "./plan-objects";

/**
 * A plan for people: per node its volume groups (claimed, leaving and excluded devices with reasons,
 * thin pools), the numbered actions as shell-quoted commands with why, what is blocked, and the hash.
 */
export function formatPlanText(doc: PlanDocument): string {
  const out: string[] = [];
  for (const node of doc.nodes) out.push(...formatNode(node), "");
  out.push(planSummary(doc));
  return `${out.join("\n")}\n`;
}

/** The plan in one line: "3 nodes, 2 selected: 1 with actions, 1 with blocked steps, 0 converged". */
export function planSummary(doc: PlanDocument): string {
  const selected = doc.nodes.filter((n) => n.selected);
  const pending = selected.filter((n) => n.actions.length > 0).length;
  const blocked = selected.filter((n) => n.blocked.length > 0).length;
  const converged = selected.filter((n) => !n.actions.length && !n.blocked.length).length;
  return `${doc.nodes.length} ${doc.nodes.length === 1 ? "node" : "nodes"}, ${selected.length} selected: ${pending} with actions, ${blocked} with blocked steps, ${converged} converged`;
}

function formatNode(node: NodePlan): string[] {
  if (!node.selected) return [`node ${node.node}: not selected by the node set's nodeSelector`];
  const lines = [`node ${node.node}${node.nodeSet ? ` (node set ${node.nodeSet})` : ""}`];
  for (const vg of node.volumeGroups) {
    const tags = [vg.exists ? "exists" : "new", ...(vg.wildcard ? ["wildcard"] : [])];
    lines.push(`  volume group ${vg.name} (${tags.join(", ")})`);
    lines.push(...table("claimed", vg.claimed.map(claimRow)));
    if (vg.leaving?.length) lines.push(...table("leaving", vg.leaving.map(claimRow)));
    if (vg.excluded.length) {
      lines.push("    excluded:");
      const width = Math.max(...vg.excluded.map((e) => (e.path ?? e.kname).length));
      for (const e of vg.excluded) {
        const name = e.path ?? e.kname;
        e.reasons.forEach((r, i) => lines.push(`      ${(i === 0 ? name : "").padEnd(width)}  ${r}`));
      }
    }
    if (vg.thinPools?.length) {
      lines.push("    thin pools:");
      for (const p of vg.thinPools)
        lines.push(`      ${p.name} (device class ${p.deviceClass}): ${poolText(p)}`);
    }
  }
  if (node.actions.length === 0) lines.push("  actions: none");
  else {
    lines.push("  actions:");
    node.actions.forEach((a, i) => {
      lines.push(
        `    ${String(i + 1).padStart(2)}. ${commandText(a)}${a.destructive ? "   # DESTRUCTIVE" : ""}`,
      );
      lines.push(`        ${a.reason}`);
    });
  }
  if (node.blocked.length) {
    lines.push("  blocked:");
    for (const b of node.blocked) lines.push(`    - ${b.reason}`);
  }
  const classes = node.lvmd["device-classes"].map((dc) => dc.name);
  lines.push(`  lvmd device classes: ${classes.length ? classes.join(", ") : "none"}`);
  lines.push(`  hash: ${node.hash}`);
  return lines;
}

function table(title: string, rows: string[][]): string[] {
  if (rows.length === 0) return [`    ${title}: none`];
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return [
    `    ${title}:`,
    ...rows.map(
      (r) =>
        `      ${r
          .map((cell, c) => cell.padEnd(widths[c]!))
          .join("  ")
          .trimEnd()}`,
    ),
  ];
}

function claimRow(c: DeviceClaim): string[] {
  const notes = [
    c.member ? "member" : c.adopted ? "joins (adopted PV)" : "joins",
    ...(c.renamedFrom ? [`was ${c.renamedFrom}`] : []),
    ...(c.wipeSignatures?.length
      ? [`wipes ${c.wipeSignatures.map(signatureText).join(", ")}`]
      : c.wipe?.length
        ? [`wipes ${c.wipe.join(", ")}`]
        : []),
  ];
  return [c.path ?? c.kname, formatSize(c.size), c.id, notes.join(", ")];
}

/** A thin pool's size now and after the plan, in words: "514980 extents, grown to 90%VG". */
export function poolText(p: ThinPoolPlan): string {
  if (!p.exists)
    return p.targetPercent
      ? `created with ${p.targetPercent}`
      : p.targetExtents !== undefined
        ? `created with ${p.targetExtents} extents`
        : "not created";
  if (p.targetPercent) return `${p.extents} extents, grown to ${p.targetPercent}`;
  if (p.targetExtents !== undefined && p.extents !== undefined && p.targetExtents > p.extents)
    return `${p.extents} extents, grown to ${p.targetExtents}`;
  return p.extents !== undefined ? `${p.extents} extents` : "exists";
}

/** An action as a person would type it: its argv shell-quoted, or the file it writes. */
export function commandText(a: PlanAction): string {
  if (a.op === "write-lvmd-config") return `write ${a.file?.path ?? "lvmd.yaml"}`;
  return a.argv.map(shellQuote).join(" ");
}

/** Quotes an argument for a POSIX shell when it needs it: `it's` → `'it'\''s'`. */
export function shellQuote(arg: string): string {
  if (arg !== "" && /^[A-Za-z0-9_@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}
