import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import { CLASSES_MANAGED_BY_ANNOTATION } from "../api/class-objects";
import { GROUP_VERSION, type LVMNodeSetSpec } from "../api";

/** How long `pulumi up` waits for a set's LVMNodesReady unless told otherwise (NodeSetArgs.readyTimeoutSeconds). */
export const DEFAULT_READY_TIMEOUT_SECONDS = 600;

/**
 * The Kubernetes provider's await annotations: wait until the operator reports every node of the set
 * Ready (`LVMNodesReady`) for the generation just applied (the provider compares the condition's
 * observedGeneration with metadata.generation, as `kubectl wait` does), for at most `timeoutSeconds`.
 * Not the set's `Ready`: with `--provider-ready` that also needs TopoLVM's CSIDriver, and a Topolvm
 * given the node set is created after it, so the first up would wait for itself (the journey's first
 * run with `Ready` did, until the timeout).
 */
export function readyAwaitAnnotations(timeoutSeconds: number): Record<string, string> {
  return {
    "pulumi.com/waitFor": "condition=LVMNodesReady",
    "pulumi.com/timeoutSeconds": String(timeoutSeconds),
  };
}

export interface LvmNodeSetResourceArgs {
  readonly nodeSetName: string;
  readonly namespace: string;
  readonly labels?: Record<string, string>;
  readonly spec: LVMNodeSetSpec;
  /** Wait for LVMNodesReady for at most this many seconds; undefined: do not wait. */
  readonly readyTimeoutSeconds: number | undefined;
}

/**
 * The LVMNodeSet custom resource of a NodeSet. Awaited (readyTimeoutSeconds set), its dependents
 * are created once every selected node's volume groups exist: a Topolvm given the node set starts
 * lvmd only then. Before, lvmd started first, exited with "volume group not found" and took
 * topolvm-node and its sidecars down with it, restarting in back-off until the operator had built
 * the group (test/journey: every run showed these restarts, and PVCs waited for them).
 */
export function lvmNodeSetResource(
  name: string,
  args: LvmNodeSetResourceArgs,
  opts: pulumi.CustomResourceOptions,
): k8s.apiextensions.CustomResource {
  const annotations: Record<string, string> = {
    // Its DeviceClass children make the StorageClasses and VolumeSnapshotClasses: the operator must not.
    [CLASSES_MANAGED_BY_ANNOTATION]: "pulumi",
    ...(args.readyTimeoutSeconds !== undefined ? readyAwaitAnnotations(args.readyTimeoutSeconds) : {}),
  };
  return new k8s.apiextensions.CustomResource(
    name,
    {
      apiVersion: GROUP_VERSION,
      kind: "LVMNodeSet",
      // No empty labels map: the API server drops it, and the provider would then see a change on
      // every preview.
      metadata: {
        name: args.nodeSetName,
        namespace: args.namespace,
        ...(Object.keys(args.labels ?? {}).length ? { labels: args.labels } : {}),
        annotations,
      },
      spec: args.spec,
    },
    opts,
  );
}
