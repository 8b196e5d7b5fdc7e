/**
 * The pages `plan --html` and `status --html` write, in a real browser (Debian's Chromium, headless,
 * through playwright-core): built for 3 and for 500 nodes of the synthetic fleet and for a status
 * of made-up LVMNodes, opened from file://, then checked through the DOM: cells carry the state and
 * the reasons the plan gives, a click shows them in the node's details, the filters hide what they
 * should. Any console error, uncaught error or request that is not the file itself fails the test.
 * Screenshots and pages go to $PULUMI_LVM_TEST_REPORTS/html-page (else a temporary folder), printed.
 */
import * as path from "node:path";
import type { Browser, Page } from "playwright-core";
import { planMap } from "../../src/cli/html/plan-map";
import { renderPage } from "../../src/cli/html/page";
import { statusMap } from "../../src/cli/html/status-map";
import { statusView } from "../../src/cli/status-view";
import { syntheticNodeInventories } from "../../src/inventory/synthetic";
import { commandText, planNodes, type NodePlan, type PlanDocument } from "../../src/planner";
import { BENCH_NODE_SET } from "../bench/node-set";
import { launchChromium, openPage, reportDirectory, type OpenedPage } from "../support/html/chromium";
import { statusFleet, statusNode } from "../support/html/status-fleet";

jest.setTimeout(180_000);

let browser: Browser;
let dir: string;
const opened: OpenedPage[] = [];

beforeAll(async () => {
  browser = await launchChromium();
  dir = reportDirectory();
});
afterAll(async () => {
  await browser?.close();
});
afterEach(async () => {
  // Whatever a test did, the pages it opened had no error at all.
  for (const p of opened.splice(0)) {
    expect(p.errors).toEqual([]);
    await p.page.close();
  }
});

async function open(name: string, html: string): Promise<OpenedPage> {
  const p = await openPage(browser, dir, name, html);
  opened.push(p);
  return p;
}

async function screenshot(page: Page, name: string): Promise<void> {
  const file = path.join(dir, `${name}.png`);
  await page.screenshot({ path: file });
  console.log(`screenshot: ${file}`);
}

/** A device's cell in a node's row (by the title, which starts with the device's name). */
const cell = (page: Page, node: string, device: string) =>
  page.locator(`.row[data-name="${node}"] .c[title^="${device}:"]`);

/** The names of the rows shown. */
const shownRows = (page: Page) =>
  page.evaluate(
    `[...document.querySelectorAll(".row[data-i]")].filter((r) => !r.hidden).map((r) => r.dataset.name)`,
  ) as Promise<string[]>;

/** How many cells of `state` are shown (visibility), of how many. */
const shownCells = (page: Page, state: string) =>
  page.evaluate(
    `(() => { const all = [...document.querySelectorAll(".c.s-${state}")]; return [all.filter((c) => getComputedStyle(c).visibility !== "hidden").length, all.length]; })()`,
  ) as Promise<[number, number]>;

/** Every device of a node the plan names, with its state as the page must show it, and a reason. */
function expectedCells(n: NodePlan): Array<{ device: string; state: string; reason: string }> {
  const blocked = new Map(n.blocked.filter((b) => b.device).map((b) => [b.device!, b.reason]));
  const fate = (device: string, state: string, reason: string) =>
    blocked.has(device)
      ? { device, state: "blocked", reason: blocked.get(device)! }
      : { device, state, reason };
  return n.volumeGroups.flatMap((vg) => [
    ...vg.claimed.map((c) =>
      fate(
        c.path ?? c.kname,
        c.member ? "claimed" : "joining",
        `${vg.name}: ${c.member ? "a member" : "joins"}`,
      ),
    ),
    ...(vg.leaving ?? []).map((c) => fate(c.path ?? c.kname, "leaving", `${vg.name}: leaves`)),
    // A device excluded by one group may be claimed by another: only the reason is sure to be there.
    ...vg.excluded.map((e) => ({
      device: e.path ?? e.kname,
      state: "",
      reason: `${vg.name}: ${e.reasons[0]}`,
    })),
  ]);
}

async function checkNode(page: Page, n: NodePlan): Promise<void> {
  for (const e of expectedCells(n)) {
    const c = cell(page, n.node, e.device);
    await expect(c.count()).resolves.toBe(1);
    if (e.state) expect(await c.getAttribute("class")).toContain(`s-${e.state}`);
    expect(await c.getAttribute("title")).toContain(e.reason);
  }
}

function planPage(count: number): { doc: PlanDocument; html: string } {
  const doc = planNodes(syntheticNodeInventories(count), BENCH_NODE_SET);
  return { doc, html: renderPage(planMap(doc)) };
}

test("plan, 3 nodes: every device's state and reason, the details on a click, the filters", async () => {
  const { doc, html } = planPage(3);
  const { page } = await open("plan-3", html);
  await screenshot(page, "plan-3");
  for (const n of doc.nodes) await checkNode(page, n);

  // A click on an excluded cell opens its node's details, that device marked with its reasons.
  const n = doc.nodes.find((x) => x.volumeGroups.some((vg) => vg.excluded.length))!;
  const excluded = n.volumeGroups.flatMap((vg) => vg.excluded)[0]!;
  await cell(page, n.node, excluded.path ?? excluded.kname).click();
  const detail = page.locator(`.row[data-name="${n.node}"] + .detail`);
  await expect(detail.locator("tr.sel td.device").textContent()).resolves.toBe(
    excluded.path ?? excluded.kname,
  );
  await expect(detail.locator("tr.sel td.why").textContent()).resolves.toContain(excluded.reasons[0]);
  // The commands in order, as the text plan prints them.
  const steps = await detail.locator(".steps li code").allTextContents();
  expect(steps).toEqual(n.actions.map(commandText));
  await screenshot(page, "plan-3-details");
  // The node's name closes them.
  await page.locator(`.row[data-name="${n.node}"] .nm`).click();
  await expect(detail.count()).resolves.toBe(0);

  await page.fill("#q", "synthetic-1");
  await expect(shownRows(page)).resolves.toEqual(["synthetic-1"]);
  await expect(page.locator("#shown").textContent()).resolves.toBe("1 of 3 nodes");
  await page.fill("#q", "");
  await expect(shownRows(page)).resolves.toHaveLength(3);

  const [visible, all] = await shownCells(page, "excluded");
  expect(all).toBeGreaterThan(0);
  expect(visible).toBe(all);
  await page.uncheck('input[data-state="excluded"]');
  await expect(shownCells(page, "excluded")).resolves.toEqual([0, all]);
  // The other states stay.
  const [joining] = await shownCells(page, "joining");
  expect(joining).toBeGreaterThan(0);
  await page.check('input[data-state="excluded"]');
  await expect(shownCells(page, "excluded")).resolves.toEqual([all, all]);
});

test("plan, 500 nodes: loads, blocked cells show why, the name filter finds one row; load time", async () => {
  const { doc, html } = planPage(500);
  const { page, loadMs, domContentLoadedMs } = await open("plan-500", html);
  console.log(
    `plan page, 500 nodes: ${(html.length / 1e6).toFixed(1)} MB, DOMContentLoaded ${domContentLoadedMs} ms, load ${loadMs} ms in Chromium`,
  );
  await screenshot(page, "plan-500");
  await expect(page.locator(".row[data-i]").count()).resolves.toBe(500);
  // A node with a blocked device, named so that no other name contains it (synthetic-1xx..4xx).
  const blocked = doc.nodes.find((n) => n.blocked.some((b) => b.device) && /^synthetic-\d{3}$/.test(n.node))!;
  expect(blocked).toBeDefined();
  await checkNode(page, blocked);
  await checkNode(page, doc.nodes[499]!);

  await page.fill("#q", blocked.node);
  await expect(shownRows(page)).resolves.toEqual([blocked.node]);
  const device = blocked.blocked.find((b) => b.device)!;
  await cell(page, blocked.node, device.device!).click();
  const detail = page.locator(`.row[data-name="${blocked.node}"] + .detail`);
  await expect(detail.locator("tr.sel td.state").textContent()).resolves.toBe("blocked");
  await expect(detail.locator("tr.sel td.why").textContent()).resolves.toContain(device.reason);
  await screenshot(page, "plan-500-filtered");

  await page.fill("#q", "");
  await page.uncheck('input[data-state="joining"]');
  const [visible, all] = await shownCells(page, "joining");
  expect([visible, all > 1000]).toEqual([0, true]);
});

test("status: usage bars, a waiting plan's steps with the wipe marked, a blocked device, names escaped", async () => {
  const EVIL = `<script>window.pwned=1</script>"'`;
  const { sets, nodes } = statusFleet(12);
  const evil = statusNode(EVIL, 3);
  const group = evil.status!.volumeGroups![0]!;
  const device = `/dev/"><img src=x onerror="window.pwned=2">`;
  (group.devices!.included as Array<{ kname: string }>)[0]!.kname = device;
  const all = [...nodes, evil];
  const html = renderPage(statusMap(statusView(sets, all), all));
  const { page } = await open("status-12", html);
  await screenshot(page, "status-12");

  await expect(page.evaluate("window.pwned")).resolves.toBeUndefined();
  const evilName = page.locator(".row[data-i] .nm", { hasText: "<script>" });
  await expect(evilName.textContent()).resolves.toBe(EVIL);
  await expect(evilName.getAttribute("title")).resolves.toBe(`${EVIL} (node set edge)`);

  await expect(cell(page, "node-005", "/dev/sdc").getAttribute("class")).resolves.toContain("s-blocked");
  await expect(cell(page, "node-005", "/dev/sdc").getAttribute("title")).resolves.toContain(
    "blocked: /dev/sdc left the selector of vg-data",
  );
  await expect(cell(page, "node-003", "/dev/sdd").getAttribute("class")).resolves.toContain("s-joining");
  await expect(
    page.locator('.row[data-name="node-002"] .bar.volume-group').getAttribute("title"),
  ).resolves.toBe("vg-data: Healthy, 40Gi, 34Gi used (85%), 6Gi free");

  await page.locator('.row[data-name="node-003"] .nm').click();
  const detail = page.locator('.row[data-name="node-003"] + .detail');
  await expect(detail.locator(".steps li.destructive code").allTextContents()).resolves.toEqual([
    "wipefs --all /dev/sdd",
  ]);
  await expect(detail.locator(".steps li.destructive .tag").textContent()).resolves.toBe("DESTRUCTIVE");
  await expect(detail.locator(".barline .text").allTextContents()).resolves.toEqual([
    "Healthy, 40Gi, 33Gi used (83%), 7Gi free",
    "36Gi, data 21.00%, metadata 3.10%",
  ]);

  // The escaped node: its details show the device's name as written, and nothing ran.
  await evilName.click();
  await expect(page.locator(".detail td.device", { hasText: "onerror" }).textContent()).resolves.toBe(device);
  await expect(page.evaluate("window.pwned")).resolves.toBeUndefined();
  await screenshot(page, "status-12-details");
});

test("the harness sees a page's errors: a script error and a console error are both caught", async () => {
  const broken = `<!doctype html><title>x</title><script>console.error("boom"); undefinedFunction();</script>`;
  const p = await open("broken", broken);
  expect(p.errors).toEqual(["console: boom", expect.stringMatching(/^page error: .*undefinedFunction/)]);
  p.errors.length = 0;
});
