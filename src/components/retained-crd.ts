import * as k8s from "@pulumi/kubernetes";
import type * as pulumi from "@pulumi/pulumi";
import type { CrdManifest } from "./crds";

/**
 * The field manager our CRDs are applied with (`pulumi.com/patchFieldManager`), the same in every
 * stack rather than a random one per Patch: the CRD's managedFields name us, and a stack adopting a
 * CRD that an earlier stack applied (and never updated) holds that stack's fields as its own, so
 * server-side apply removes those the newer CRD drops. (An update within a stack replaces the whole
 * CRD anyway: pulumi-kubernetes updates every CRD with a PUT, Patch or not.)
 */
export const CRD_FIELD_MANAGER = "pulumi-lvm";

/**
 * Annotations of a kept CRD: apply with force (`pulumi.com/patchForce`), taking the fields another
 * manager holds (an earlier install's plain CustomResourceDefinition, `kubectl apply`), and always
 * as CRD_FIELD_MANAGER.
 */
export const RETAINED_CRD_ANNOTATIONS: Readonly<Record<string, string>> = {
  "pulumi.com/patchForce": "true",
  "pulumi.com/patchFieldManager": CRD_FIELD_MANAGER,
};

/**
 * One of our CRDs as a Pulumi resource (docs/components.md, "CRDs: kept, adopted, upgraded").
 *
 * `retain` (LvmSystem's retainCrdsOnDelete, the one switch): a CustomResourceDefinitionPatch,
 * server-side applied with force and retainOnDelete. It creates the CRD when it is absent, adopts it
 * when it exists (kept by an earlier install's destroy: a plain CustomResourceDefinition is refused
 * there with "already exists") and applies a newer schema to it; a destroy leaves it and the
 * LVMNodeSets and LVMNodes in it. Not `retain`: a plain CustomResourceDefinition, created (refused
 * when it exists) and deleted with the stack, every LVMNodeSet and LVMNode with it.
 */
export function crdResource(
  name: string,
  crd: CrdManifest,
  retain: boolean,
  opts: pulumi.CustomResourceOptions,
): k8s.apiextensions.v1.CustomResourceDefinition | k8s.apiextensions.v1.CustomResourceDefinitionPatch {
  if (!retain)
    // The generated manifest as-is; its shape is the apiserver's to check.
    return new k8s.apiextensions.v1.CustomResourceDefinition(
      name,
      crd as unknown as k8s.apiextensions.v1.CustomResourceDefinitionArgs,
      { ...opts, retainOnDelete: false },
    );
  const annotations = (crd.metadata["annotations"] ?? {}) as Record<string, string>;
  return new k8s.apiextensions.v1.CustomResourceDefinitionPatch(
    name,
    {
      ...(crd as unknown as k8s.apiextensions.v1.CustomResourceDefinitionPatchArgs),
      metadata: { ...crd.metadata, annotations: { ...annotations, ...RETAINED_CRD_ANNOTATIONS } },
    },
    { ...opts, retainOnDelete: true },
  );
}
