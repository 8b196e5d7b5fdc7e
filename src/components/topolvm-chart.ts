/**
 * Where LvmSystem takes TopoLVM's Helm chart from: the official chart repository, a mirror of it
 * (an HTTP chart repository or an OCI registry), or a chart on local disk. Air-gapped sites need the
 * last two. What kubernetes.helm.v4.Chart gets is computed here; the checks that can be made before
 * anything registers (the local chart exists and is the pinned version) too.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import type { ValidationProblem } from "../api";

export const TOPOLVM_REPOSITORY = "https://topolvm.github.io/topolvm";
/** The chart's name in its repository (Chart.yaml `name`). */
export const TOPOLVM_CHART = "topolvm";

/** The fields of LvmSystem's `topolvm` arg that say where the chart comes from. */
export interface ChartSourceArgs {
  readonly chartVersion: string;
  readonly repository?: string;
  readonly chartPath?: string;
}

/** The chart fields of kubernetes.helm.v4.Chart's args. */
export interface ChartSource {
  readonly chart: string;
  readonly version?: string;
  readonly repositoryOpts?: { readonly repo: string };
}

/**
 * - `chartPath`: the chart itself (Helm takes a local path as it is; its version was checked against
 *   chartVersion by chartSourceProblems, for a directory).
 * - an `oci://` repository: Helm has no repository index there, the chart is `<registry path>/topolvm`.
 * - an `http(s)://` repository (default: the official one): the chart `topolvm` of that repository.
 */
export function topolvmChartSource(args: ChartSourceArgs): ChartSource {
  if (args.chartPath !== undefined) return { chart: args.chartPath };
  const repository = args.repository ?? TOPOLVM_REPOSITORY;
  if (repository.startsWith("oci://"))
    return { chart: `${repository.replace(/\/+$/, "")}/${TOPOLVM_CHART}`, version: args.chartVersion };
  return { chart: TOPOLVM_CHART, version: args.chartVersion, repositoryOpts: { repo: repository } };
}

/**
 * A local chart must exist; a chart directory must be TopoLVM's chart at exactly chartVersion (a
 * version pin that a local copy silently ignored would be no pin). A packaged chart (.tgz) is taken
 * as it is: Helm reads it at preview. chartPath and repository exclude each other. Paths are
 * `at.chartPath` / `at.repository`.
 */
export function chartSourceProblems(args: ChartSourceArgs, at: string): ValidationProblem[] {
  if (args.chartPath === undefined) return [];
  const where = `${at}.chartPath`;
  if (args.repository !== undefined)
    return [
      { path: where, message: "give either chartPath (a chart on disk) or repository (a mirror), not both" },
    ];
  let stat: fs.Stats;
  try {
    stat = fs.statSync(args.chartPath);
  } catch (e) {
    return [{ path: where, message: `cannot read ${args.chartPath}: ${(e as Error).message}` }];
  }
  if (!stat.isDirectory()) {
    if (/\.tgz$|\.tar\.gz$/.test(args.chartPath)) return [];
    return [
      { path: where, message: `${args.chartPath} is neither a chart directory nor a packaged chart (.tgz)` },
    ];
  }
  const chartYaml = path.join(args.chartPath, "Chart.yaml");
  let meta: { name?: unknown; version?: unknown };
  try {
    meta = (YAML.parse(fs.readFileSync(chartYaml, "utf8")) ?? {}) as typeof meta;
  } catch (e) {
    return [
      { path: where, message: `cannot read the chart's Chart.yaml (${chartYaml}): ${(e as Error).message}` },
    ];
  }
  const problems: ValidationProblem[] = [];
  if (meta.name !== TOPOLVM_CHART)
    problems.push({
      path: where,
      message: `${chartYaml} names the chart ${JSON.stringify(meta.name)}, not "${TOPOLVM_CHART}"`,
    });
  const bare = (v: string) => v.replace(/^v/, "");
  if (typeof meta.version !== "string" || bare(meta.version) !== bare(args.chartVersion))
    problems.push({
      path: where,
      message: `${chartYaml} is chart version ${JSON.stringify(meta.version)}, but chartVersion pins "${args.chartVersion}"`,
    });
  return problems;
}
