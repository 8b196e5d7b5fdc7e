import type * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";

/** Where LvmSystem's objects go (its parent, its namespace) and what they wait for (the CRDs). */
export interface WorkloadContext {
  readonly parent: pulumi.Resource;
  readonly namespace: k8s.core.v1.Namespace;
  readonly crds: readonly pulumi.Resource[];
}
