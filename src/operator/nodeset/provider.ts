import type { KubeClient, KubeObject } from "../../kube/client";
import type { Resource } from "../../kube/resources";
import type { DesiredCondition } from "../conditions";

/** TopoLVM's CSI driver name: its CSIDriver object and each node's CSINode entry. */
export const TOPOLVM_DRIVER = "topolvm.io";

export const CSI_DRIVERS: Resource = {
  group: "storage.k8s.io",
  version: "v1",
  plural: "csidrivers",
  kind: "CSIDriver",
  namespaced: false,
};
export const CSI_NODES: Resource = {
  group: "storage.k8s.io",
  version: "v1",
  plural: "csinodes",
  kind: "CSINode",
  namespaced: false,
};

type CSINode = KubeObject & {
  readonly spec?: { readonly drivers?: ReadonlyArray<{ readonly name: string }> };
};

/** What the provider check saw: whether the CSIDriver exists, and the drivers each CSINode lists. */
export interface ProviderFacts {
  readonly driver: boolean;
  readonly csiNodes: ReadonlyMap<string, readonly string[]>;
}

/** One GET of the CSIDriver and one LIST of the CSINodes (per set reconcile, with --provider-ready). */
export async function readProviderFacts(kube: KubeClient): Promise<ProviderFacts> {
  const [driver, nodes] = await Promise.all([
    kube.get(CSI_DRIVERS, undefined, TOPOLVM_DRIVER),
    kube.list<CSINode>(CSI_NODES, undefined),
  ]);
  return {
    driver: driver !== undefined,
    csiNodes: new Map(nodes.items.map((n) => [n.metadata.name, (n.spec?.drivers ?? []).map((d) => d.name)])),
  };
}

/**
 * The set's ProviderReady condition (pure): TopoLVM's CSIDriver exists and the CSINode of each
 * selected node lists topolvm.io (its node plugin registered with the kubelet).
 */
export function providerReady(selected: readonly string[], facts: ProviderFacts): DesiredCondition {
  const type = "ProviderReady";
  if (!facts.driver)
    return {
      type,
      status: "False",
      reason: "CSIDriverMissing",
      message: `CSIDriver ${TOPOLVM_DRIVER} does not exist: TopoLVM is not installed`,
    };
  const missing = selected.filter((n) => !(facts.csiNodes.get(n) ?? []).includes(TOPOLVM_DRIVER));
  if (missing.length)
    return {
      type,
      status: "False",
      reason: "NodePluginNotRegistered",
      message: `TopoLVM's node plugin is not registered on ${missing.length} of ${selected.length} selected node(s): ${missing.slice(0, 10).join(", ")}${missing.length > 10 ? ` and ${missing.length - 10} more` : ""} (their CSINode does not list ${TOPOLVM_DRIVER})`,
    };
  return {
    type,
    status: "True",
    reason: "ProviderReady",
    message: `CSIDriver ${TOPOLVM_DRIVER} exists and is registered on all ${selected.length} selected node(s)`,
  };
}
