/**
 * TopoLVM's chart on disk for the engine tests that install it (kubernetes-e2e.test.ts from
 * TypeScript, python-lvm-system.test.ts from Python): nothing is downloaded. And what a destroy of
 * an LvmSystem installing it keeps: the CRDs retained, ours and the chart's.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { repoRoot } from "../env/cluster";
import type { DeclaredObject, GetObject } from "./apiserver-objects";

/**
 * TopoLVM's chart from the verified snapshot (topolvm/topolvm @ topolvm-chart-v17.1.0,
 * charts/topolvm), prepared as a released chart package is: the snapshot is the source tree, whose
 * cert-manager subchart (`condition: cert-manager.enabled`, false by default and here) is only
 * fetched into charts/ at release. Helm refuses a chart whose declared dependency is absent (and
 * Pulumi's Helm would try to download it because of Chart.lock), so this copy drops that disabled
 * dependency. The templates rendered are the chart's, unchanged. Returns the chart's directory
 * under `dest`.
 */
export function topolvmChart(dest: string): string {
  const top = execFileSync(
    "bash",
    ["-c", 'source test/env/sources.sh && unpack_snapshot topolvm-chart-v17.1.0.tar.gz "$1"', "-", dest],
    { cwd: repoRoot, encoding: "utf8" },
  ).trim();
  const chart = path.join(dest, "topolvm");
  fs.cpSync(path.join(top, "charts", "topolvm"), chart, { recursive: true });
  const meta = YAML.parse(fs.readFileSync(path.join(chart, "Chart.yaml"), "utf8")) as Record<string, unknown>;
  expect(meta).toMatchObject({ name: "topolvm", version: "17.1.0", appVersion: "0.41.0" });
  expect(meta.dependencies).toEqual([
    expect.objectContaining({ name: "cert-manager", condition: "cert-manager.enabled" }),
  ]);
  delete meta.dependencies;
  fs.writeFileSync(path.join(chart, "Chart.yaml"), YAML.stringify(meta));
  fs.rmSync(path.join(chart, "Chart.lock"));
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
