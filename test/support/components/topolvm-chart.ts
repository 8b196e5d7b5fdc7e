import { matchesNodeSelector, type NodeFacts } from "../../../src/planner/node-selector";

/* eslint-disable @typescript-eslint/no-explicit-any -- chart values are free-form */

/**
 * Test support: what TopoLVM's chart makes of its values on one node, as its templates do
 * (templates/lvmd/daemonset.yaml, templates/node/daemonset.yaml of chart 11.5.0 and later): one lvmd
 * DaemonSet for `lvmd` and one for each `lvmd.additionalConfigs` entry, each scheduled by that
 * entry's `nodeSelector` (labels equal) and `affinity` (required node affinity); topolvm-node by
 * `node.nodeSelector` and `node.affinity`. Taints are left out: every lvmd and topolvm-node gets the
 * same tolerations.
 */
export function chartOnNode(
  values: Record<string, any>,
  node: NodeFacts,
): { lvmdDeviceClasses: unknown[][]; topolvmNode: boolean } {
  const lvmds = [values.lvmd, ...(values.lvmd.additionalConfigs ?? [])].filter((c) => schedules(c, node));
  return { lvmdDeviceClasses: lvmds.map((l) => l.deviceClasses), topolvmNode: schedules(values.node, node) };
}

function schedules(c: { nodeSelector?: Record<string, string>; affinity?: any }, node: NodeFacts): boolean {
  const required = c.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  return (
    Object.entries(c.nodeSelector ?? {}).every(([k, v]) => node.labels[k] === v) &&
    (!required || matchesNodeSelector(required, node))
  );
}
