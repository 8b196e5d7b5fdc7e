/**
 * TopoLVM's Helm chart as every test that installs it reads it (the cluster tier, the journey, the
 * demo, and the engine tests of the Kubernetes tier): the pinned snapshot in ../shared/sources
 * (topolvm/topolvm @ topolvm-chart-v17.1.0, sha256 in test/env/sources.sha256), unpacked once into
 * the cache through test/env/sources.sh and prepared once as a released chart package is.
 *
 * The snapshot is the git tree, not the packaged chart: its Chart.yaml lists the cert-manager
 * subchart (`condition: cert-manager.enabled`, false by default and in every test) whose package is
 * only fetched into charts/ at release. Helm refuses a chart whose declared dependency is absent (and
 * Pulumi's Helm would try to download it because of Chart.lock), so the prepared copy drops that
 * entry and Chart.lock; the templates are the chart's, unchanged.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { cacheDir, REPO_ROOT } from "../vm/guest";

export const CHART_VERSION = "17.1.0";
const CHART_SNAPSHOT = `topolvm-chart-v${CHART_VERSION}.tar.gz`;

/** The prepared chart's directory, in the cache (made once; later calls need no snapshot). */
export function chartDir(): string {
  const dest = path.join(cacheDir(), "cluster", "src");
  const top = execFileSync(
    "bash",
    [
      "-c",
      'source "$1"; unpack_snapshot "$2" "$3"',
      "bash",
      path.join(REPO_ROOT, "test/env/sources.sh"),
      CHART_SNAPSHOT,
      dest,
    ],
    { encoding: "utf8" },
  ).trim();
  const chart = path.join(top, "charts", "topolvm");
  const copy = path.join(dest, `topolvm-chart-${CHART_VERSION}-rendered`);
  if (fs.existsSync(path.join(copy, "Chart.yaml"))) return copy;
  // Prepared in a directory of this process's own and renamed into place, so a tier reading the
  // chart at the same moment (the cluster tier and the Kubernetes tier, on a cold cache) sees either
  // no copy or a whole one.
  const own = `${copy}.${process.pid}`;
  fs.rmSync(own, { recursive: true, force: true });
  fs.cpSync(chart, own, { recursive: true });
  const text = fs.readFileSync(path.join(own, "Chart.yaml"), "utf8");
  const cut = text.replace(/\ndependencies:\n(?: {2}.*\n)*/, "\n");
  if (cut === text) throw new Error(`no dependencies block in ${own}/Chart.yaml to drop`);
  fs.writeFileSync(path.join(own, "Chart.yaml"), cut);
  fs.rmSync(path.join(own, "Chart.lock"), { force: true });
  try {
    fs.renameSync(own, copy);
  } catch (e) {
    // Another process put its copy there first: the same files.
    fs.rmSync(own, { recursive: true, force: true });
    if (!fs.existsSync(path.join(copy, "Chart.yaml"))) throw e;
  }
  return copy;
}
