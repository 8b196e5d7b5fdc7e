import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";

/*
 * Debian's Chromium driven by playwright-core, for the tests of the pages the CLI writes. No browser
 * is downloaded: the system's is used (test/setup.sh installs it), or PULUMI_LVM_CHROMIUM's.
 */

export const CHROMIUM = process.env.PULUMI_LVM_CHROMIUM ?? "/usr/bin/chromium";

/** Starts headless Chromium; throws, naming what to install, when it is not there. */
export async function launchChromium(): Promise<Browser> {
  if (!fs.existsSync(CHROMIUM))
    throw new Error(
      `${CHROMIUM} is missing: the HTML page tests need Debian's chromium ` +
        "(apt-get install --no-install-recommends chromium, as test/setup.sh does), " +
        "or PULUMI_LVM_CHROMIUM set to a Chromium binary",
    );
  // --no-sandbox: the tests run as root, where Chromium's sandbox refuses to start.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ["--no-sandbox", "--headless=new"],
  });
}

/** Where the pages and screenshots go: $PULUMI_LVM_TEST_REPORTS/html-page, else a new temporary folder. */
export function reportDirectory(): string {
  const base = process.env.PULUMI_LVM_TEST_REPORTS;
  const dir = base
    ? path.join(base, "html-page")
    : fs.mkdtempSync(path.join(os.tmpdir(), "pulumi-lvm-html-page-"));
  fs.mkdirSync(dir, { recursive: true });
  return dir;
}

/** A page opened from a file, with every console error and uncaught error it had, and its load time. */
export interface OpenedPage {
  readonly page: Page;
  readonly errors: string[];
  /** The navigation's loadEventEnd, in ms from its start (Chromium's own clock). */
  readonly loadMs: number;
  readonly domContentLoadedMs: number;
}

/** Writes `html` to `<dir>/<name>.html` and opens it from file:// in a new 1400×900 page. */
export async function openPage(
  browser: Browser,
  dir: string,
  name: string,
  html: string,
): Promise<OpenedPage> {
  const file = path.join(dir, `${name}.html`);
  fs.writeFileSync(file, html);
  const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  const errors: string[] = [];
  page.on("console", (m) => {
    if (m.type() === "error") errors.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => errors.push(`page error: ${e.message}`));
  page.on("request", (r) => {
    if (!r.url().startsWith("file://")) errors.push(`request: ${r.url()}`);
  });
  await page.goto(`file://${file}`, { waitUntil: "load" });
  // A string, run in the page: this project's TypeScript has no DOM types.
  const timing = (await page.evaluate(
    "(() => { const n = performance.getEntriesByType('navigation')[0]; return { load: n.loadEventEnd, dom: n.domContentLoadedEventEnd }; })()",
  )) as { load: number; dom: number };
  return { page, errors, loadMs: Math.round(timing.load), domContentLoadedMs: Math.round(timing.dom) };
}
