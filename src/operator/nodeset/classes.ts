import {
  CLASSES_MANAGED_BY_ANNOTATION,
  snapshotClassManifest,
  storageClassManifest,
} from "../../api/class-objects";
import type { LVMNodeSetSpec } from "../../api";
import type { KubeClient, KubeObject } from "../../kube/client";
import { KubeApiError } from "../../kube/errors";
import type { Resource } from "../../kube/resources";
import type { LVMNodeSetObject } from "../types";

export const STORAGE_CLASSES: Resource = {
  group: "storage.k8s.io",
  version: "v1",
  plural: "storageclasses",
  kind: "StorageClass",
  namespaced: false,
};
export const VOLUME_SNAPSHOT_CLASSES: Resource = {
  group: "snapshot.storage.k8s.io",
  version: "v1",
  plural: "volumesnapshotclasses",
  kind: "VolumeSnapshotClass",
  namespaced: false,
};

/** The label on the classes the operator created (and the annotation naming the set they are for). */
export const OPERATOR_MANAGED_BY = { "app.kubernetes.io/managed-by": "pulumi-lvm-operator" } as const;
export const FOR_NODE_SET_ANNOTATION = "lvm.topolvm.io/node-set";

/** One class object the set's device classes ask for. */
export interface ClassObject {
  readonly resource: Resource;
  readonly manifest: KubeObject & Record<string, unknown>;
}

/**
 * The StorageClasses and VolumeSnapshotClasses the operator creates for a set (pure): none when the
 * set says the Pulumi components make them (CLASSES_MANAGED_BY_ANNOTATION "pulumi"); otherwise per
 * device class what its creationPolicy and namingPolicy give (the same manifests as the DeviceClass
 * component's, src/api/class-objects.ts), labelled as the operator's and annotated with the set.
 */
export function desiredClassObjects(set: LVMNodeSetObject, spec: LVMNodeSetSpec): ClassObject[] {
  if (set.metadata.annotations?.[CLASSES_MANAGED_BY_ANNOTATION] === "pulumi") return [];
  const annotations = { [FOR_NODE_SET_ANNOTATION]: `${set.metadata.namespace}/${set.metadata.name}` };
  return (spec.template.deviceClasses ?? []).flatMap((dc) => {
    const sc = storageClassManifest(dc, { ...OPERATOR_MANAGED_BY });
    const vsc = snapshotClassManifest(dc, { ...OPERATOR_MANAGED_BY });
    return [
      ...(sc
        ? [
            {
              resource: STORAGE_CLASSES,
              manifest: {
                apiVersion: "storage.k8s.io/v1",
                kind: "StorageClass",
                ...sc,
                metadata: { ...sc.metadata, annotations },
              },
            },
          ]
        : []),
      ...(vsc
        ? [
            {
              resource: VOLUME_SNAPSHOT_CLASSES,
              manifest: { ...vsc, metadata: { ...vsc.metadata, annotations } },
            },
          ]
        : []),
    ];
  });
}

/**
 * creationPolicy CreateIfNotExists, as the proposal says: each class object is created when no
 * object of its name exists, and an existing one is never changed or deleted — whoever made it
 * (the Pulumi components, a person, this operator earlier) owns it. A missing
 * VolumeSnapshotClass CRD (no snapshot controller installed) skips the snapshot classes, logged.
 * Returns how many objects were created; failures are logged and named, never thrown: the
 * LVMNodes do not wait for a StorageClass.
 */
export async function ensureClassObjects(
  kube: KubeClient,
  objects: readonly ClassObject[],
  log: (entry: Record<string, unknown>) => void,
  nodeSet: string,
): Promise<{ created: string[]; failed: string[] }> {
  const created: string[] = [];
  const failed: string[] = [];
  for (const { resource, manifest } of objects) {
    const what = `${resource.kind} ${manifest.metadata.name}`;
    try {
      if (await kube.get(resource, undefined, manifest.metadata.name)) continue;
      await kube.create(resource, "", manifest);
      created.push(what);
      log({ msg: "created", nodeSet, object: what });
    } catch (e) {
      if (e instanceof KubeApiError && e.status === 409) continue; // made meanwhile by someone else: theirs
      failed.push(`${what}: ${(e as Error).message}`);
      log({ msg: "class object not created", nodeSet, object: what, error: (e as Error).message });
    }
  }
  return { created, failed };
}
