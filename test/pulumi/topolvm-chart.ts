/**
 * TopoLVM's chart on disk for the engine tests that install it (kubernetes-e2e.test.ts from
 * TypeScript, python-lvm-system.test.ts from Python): nothing is downloaded. And what a destroy of
 * an LvmSystem installing it keeps: the CRDs retained, ours and the chart's.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { CHART_VERSION, chartDir } from "../env/topolvm-chart";
import type { DeclaredObject, GetObject } from "./apiserver-objects";

/**
 * A copy of TopoLVM's chart (test/env/topolvm-chart.ts: the pinned snapshot, prepared as a released
 * chart package is) in `dest`, for a program that names it by path. Returns the chart's directory.
 */
export function topolvmChart(dest: string): string {
  const chart = path.join(dest, "topolvm");
  fs.cpSync(chartDir(), chart, { recursive: true });
  const meta = YAML.parse(fs.readFileSync(path.join(chart, "Chart.yaml"), "utf8")) as Record<string, unknown>;
  expect(meta).toMatchObject({ name: "topolvm", version: CHART_VERSION, appVersion: "0.41.0" });
  expect(meta.dependencies).toBeUndefined();
  expect(fs.existsSync(path.join(chart, "Chart.lock"))).toBe(false);
  return chart;
}

/** Kept on destroy: ours (retainCrdsOnDelete) and TopoLVM's (helm.sh/resource-policy: keep, set by Topolvm). */
export const RETAINED_CRDS: readonly string[] = [
  "lvmnodesets.lvm.topolvm.io",
  "lvmnodes.lvm.topolvm.io",
  "logicalvolumes.topolvm.io",
];

/**
 * What a destroy left of the objects an `up` declared, read back with the test's own `get`
 * (undefined when the object does not exist): "<kind> <namespace>/<name>" for each still there and
 * not being deleted. The retained CRDs are not listed; each must still exist (asserted here).
 */
export async function leftAfterDestroy(
  declared: readonly DeclaredObject[],
  get: GetObject,
): Promise<string[]> {
  const left: string[] = [];
  for (const o of declared) {
    const got = await get(o.apiVersion, o.kind, o.name, o.namespace);
    const retained = o.kind === "CustomResourceDefinition" && RETAINED_CRDS.includes(o.name);
    if (retained) expect(got).toBeDefined();
    else if (got && !got.metadata.deletionTimestamp) left.push(`${o.kind} ${o.namespace ?? ""}/${o.name}`);
  }
  return left;
}
