import {
  DISK_STATES,
  type DiskMap,
  type DiskState,
  type MapBar,
  type MapCell,
  type MapNode,
} from "./disk-map";
import { escapeHtml as esc, scriptJson } from "./html-text";
import { PAGE_SCRIPT } from "./page-script";
import { pageStyle } from "./page-style";

/** The mark in each cell, so the states read without colour too. */
export const STATE_MARKS: Readonly<Record<DiskState, string>> = {
  blocked: "!",
  leaving: "−",
  joining: "+",
  claimed: "●",
  excluded: "×",
};

/**
 * The page (pure): one self-contained HTML document, its style and script inline, that loads nothing
 * (its Content-Security-Policy forbids every fetch), so it works opened from a file. A sticky header
 * with the filters (node name, states), then one row per node: its name, state, its volume groups
 * and thin pools as small bars, and one cell per device, in a column per device name across the
 * fleet. Each cell's title holds its reasons; a click on a cell or the node's name opens the node's
 * details (every device with its reasons, the bars with numbers, the steps), drawn then from the
 * data embedded as JSON, so 500 nodes stay a light page. Every text from the data is escaped.
 */
export function renderPage(map: DiskMap): string {
  const columns = deviceColumns(map.nodes);
  const index = new Map(columns.map((d, i) => [d, i]));
  const counts = stateCounts(map.nodes);
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'">
<title>${esc(map.title)}</title>
<style>${pageStyle(columns.length)}</style>
</head>
<body class="source-${map.source}">
<header class="top">
<h1>${esc(map.title)}</h1>
${map.summary.map((l) => `<p class="summary">${esc(l)}</p>`).join("\n")}
<form class="filters" role="search" onsubmit="return false">
<label>Node <input id="q" type="search" placeholder="name contains…" autocomplete="off"></label>
<fieldset><legend>States</legend>
${DISK_STATES.map(
  (s) =>
    `<label class="legend s-${s}"><input type="checkbox" data-state="${s}" checked><span class="mark">${STATE_MARKS[s]}</span> ${s} (${counts[s]})</label>`,
).join("\n")}
</fieldset>
<output id="shown">${map.nodes.length} of ${map.nodes.length} nodes</output>
</form>
<p class="hint">Click a cell or a node's name for its details: every device with its reasons, the sizes${map.source === "plan" ? ", the commands in order" : ""}.</p>
</header>
<main id="grid" class="grid">
<div class="row head"><div class="nm">node</div><div class="st">state</div><div class="bars">${map.source === "plan" ? "volume groups, after the plan" : "volume groups, used"}</div>${columns
    .map((d, i) => `<div class="dv k${i}" title="${esc(d)}">${esc(shortName(d))}</div>`)
    .join("")}</div>
${map.nodes.map((n, i) => nodeRow(n, i, index)).join("\n")}
</main>
<script type="application/json" id="data">${scriptJson(map.nodes)}</script>
<script>${PAGE_SCRIPT}</script>
</body>
</html>
`;
}

function nodeRow(node: MapNode, i: number, columns: ReadonlyMap<string, number>): string {
  const cells = node.cells.map((c, j) => cell(c, j, columns.get(c.device)!)).join("");
  const set = node.nodeSet !== undefined ? ` (node set ${node.nodeSet})` : "";
  return `<div class="row n-${esc(node.state)}" data-i="${i}" data-name="${esc(node.name)}"><button type="button" class="nm" aria-expanded="false" title="${esc(node.name + set)}">${esc(node.name)}</button><div class="st">${esc(node.state)}${node.notes.length ? ` <span class="note" title="${esc(node.notes.join("\n"))}">i</span>` : ""}</div><div class="bars">${node.bars.map(miniBar).join("")}</div>${cells}</div>`;
}

function cell(c: MapCell, j: number, column: number): string {
  const title = [`${c.device}: ${c.state}${c.size ? `, ${c.size}` : ""}`, ...c.reasons].join("\n");
  return `<button type="button" class="c s-${c.state} k${column}" data-c="${j}" title="${esc(title)}">${STATE_MARKS[c.state]}</button>`;
}

/** A bar in a row: thin, its numbers in its title (and in the details). */
function miniBar(b: MapBar): string {
  const parts = b.parts
    .map((p) => `<i class="p-${p.kind}" style="width:${(p.fraction * 100).toFixed(1)}%"></i>`)
    .join("");
  return `<span class="bar ${b.kind}" title="${esc(`${b.name}: ${b.text}`)}">${parts}</span>`;
}

/** Every device name of the fleet, once, numbers in natural order (nvme2n1 before nvme10n1). */
export function deviceColumns(nodes: readonly MapNode[]): string[] {
  const key = (s: string) => s.replace(/\d+/g, (d) => d.padStart(12, "0"));
  const names = [...new Set(nodes.flatMap((n) => n.cells.map((c) => c.device)))];
  return names
    .map((name) => [key(name), name] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([, name]) => name);
}

function shortName(device: string): string {
  return device.startsWith("/dev/") ? device.slice(5) : device;
}

function stateCounts(nodes: readonly MapNode[]): Record<DiskState, number> {
  const counts = Object.fromEntries(DISK_STATES.map((s) => [s, 0])) as Record<DiskState, number>;
  for (const n of nodes) for (const c of n.cells) counts[c.state]++;
  return counts;
}
