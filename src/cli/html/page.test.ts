import type { DiskMap, MapNode } from "./disk-map";
import { escapeHtml, scriptJson } from "./html-text";
import { deviceColumns, renderPage } from "./page";

const EVIL = `<script>window.pwned=1</script>"'&`;
const node = (name: string, devices: string[]): MapNode => ({
  name,
  state: "planned",
  cells: devices.map((device) => ({ device, state: "joining", reasons: [`vg-a: ${EVIL}`] })),
  bars: [
    { name: "vg-a", kind: "volume-group", text: EVIL, parts: [{ kind: "joining", fraction: 1, text: EVIL }] },
  ],
  steps: [{ command: `wipefs --all '${EVIL}'`, reason: EVIL, destructive: true }],
  notes: [EVIL],
});
const MAP: DiskMap = {
  title: `pulumi-lvm plan: ${EVIL}`,
  source: "plan",
  summary: [EVIL],
  nodes: [node(EVIL, ["/dev/nvme10n1", `/dev/${EVIL}`, "/dev/nvme2n1"]), node("n2", ["/dev/sdb"])],
};
const html = renderPage(MAP);

test("escapeHtml writes the five characters that matter as entities", () => {
  expect(escapeHtml(EVIL)).toBe("&lt;script&gt;window.pwned=1&lt;/script&gt;&quot;&#39;&amp;");
});

test("scriptJson cannot end its script element and reads back as the value", () => {
  const value = { a: "</script><!-- \u2028" };
  expect(scriptJson(value)).not.toMatch(/<|\u2028/);
  expect(JSON.parse(scriptJson(value))).toEqual(value);
});

test("no text from the data reaches the page unescaped", () => {
  expect(html).not.toContain("<script>window");
  // Outside the JSON (whose strings JSON escapes), no quote or ampersand of the data is left as is.
  const markup = html.replace(/<script type="application\/json" id="data">[^<]*<\/script>/, "");
  expect(markup).not.toBe(html);
  expect(markup).not.toContain(`"'&`);
  // The page's own two script elements, nothing else.
  expect(html.match(/<script/g)).toHaveLength(2);
  expect(html).toContain(`data-name="${escapeHtml(EVIL)}"`);
});

test("the page loads nothing: a CSP that forbids every fetch, no URL, no external reference", () => {
  expect(html).toContain(
    `content="default-src 'none'; style-src 'unsafe-inline'; script-src 'unsafe-inline'"`,
  );
  expect(html).not.toMatch(/https?:|\bsrc=|<link|@import|url\(/);
});

test("one column per device name of the fleet, numbers in natural order", () => {
  expect(deviceColumns(MAP.nodes)).toEqual([`/dev/${EVIL}`, "/dev/nvme2n1", "/dev/nvme10n1", "/dev/sdb"]);
  // The cells sit in their device's column, whatever their order in the node.
  expect(html).toMatch(/data-c="0" title="\/dev\/nvme10n1[^"]*">\+<\/button>/);
  expect(html).toContain('class="c s-joining k2" data-c="0"');
  expect(html).toContain('class="c s-joining k0" data-c="1"');
  expect(html).toContain('class="c s-joining k1" data-c="2"');
  expect(html).toContain('class="c s-joining k3" data-c="0"');
});

test("a state checkbox per state, with its count", () => {
  expect(html).toContain('data-state="joining" checked><span class="mark">+</span> joining (4)</label>');
  expect(html).toContain('data-state="blocked" checked><span class="mark">!</span> blocked (0)</label>');
});
