import type { DeviceClaim, NodePlan, PlanDocument } from "../planner";
import { signatureText } from "../planner/plan-objects";
import { formatSize } from "../planner/units";
import { columns } from "./output";

export const WIDE_HEADER = ["NODE", "NODE SET", "VOLUME GROUP", "DEVICE", "SIZE", "ID", "STATE", "REASON"];

/**
 * `plan -o wide`: one line per node and device, for grep and awk across a fleet. STATE is `joins`
 * (claimed, to be added), `member` (claimed, already in the group), `leaving`, `excluded` (with why),
 * `blocked` (a step the planner will not take, with why), or for a node without devices to show
 * `not-selected` / `converged` / `planned`. REASON for a claimed device says what else happens to it (a
 * wipe: DESTRUCTIVE). `-` where a column does not apply.
 */
export function formatPlanWide(doc: PlanDocument): string {
  return columns(
    WIDE_HEADER,
    doc.nodes.flatMap((n) => nodeRows(n, n.nodeSet ?? doc.nodeSet ?? "-")),
  );
}

function nodeRows(node: NodePlan, set: string): string[][] {
  if (!node.selected) return [[node.node, set, "-", "-", "-", "-", "not-selected", "-"]];
  const rows: string[][] = [];
  const claim = (vg: string, c: DeviceClaim, state: string) =>
    rows.push([
      node.node,
      set,
      vg,
      c.path ?? c.kname,
      formatSize(c.size),
      c.id,
      state,
      claimNotes(c).join("; ") || "-",
    ]);
  for (const vg of node.volumeGroups) {
    for (const c of vg.claimed) claim(vg.name, c, c.member ? "member" : "joins");
    for (const c of vg.leaving ?? []) claim(vg.name, c, "leaving");
    for (const e of vg.excluded)
      rows.push([node.node, set, vg.name, e.path ?? e.kname, "-", "-", "excluded", e.reasons.join("; ")]);
  }
  for (const b of node.blocked)
    rows.push([node.node, set, b.volumeGroup ?? "-", b.device ?? "-", "-", "-", "blocked", b.reason]);
  if (rows.length === 0)
    rows.push([node.node, set, "-", "-", "-", "-", node.actions.length ? "planned" : "converged", "-"]);
  return rows;
}

/** What else happens to a claimed device: a wipe (destroying what is on it), an adoption, a rename. */
export function claimNotes(c: DeviceClaim): string[] {
  const wipes = c.wipeSignatures?.length ? c.wipeSignatures.map(signatureText) : c.wipe;
  const notes = [
    ...(wipes?.length ? [`wipes ${wipes.join(", ")}: DESTRUCTIVE`] : []),
    ...(c.adopted ? ["an orphan PV this node's agent created, adopted"] : []),
    ...(c.renamedFrom ? [`was ${c.renamedFrom}`] : []),
  ];
  return notes;
}
