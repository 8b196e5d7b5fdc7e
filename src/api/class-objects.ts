import { classObjectName, DEFAULTS } from "./defaults";
import type { DeviceClass as ApiDeviceClass } from "./template";

/**
 * The StorageClass and VolumeSnapshotClass of a device class, as plain manifests: the Pulumi
 * DeviceClass component creates them for the sets Pulumi manages, the operator for sets applied
 * without Pulumi (docs/operator.md, StorageClasses and VolumeSnapshotClasses). One definition, so
 * both paths make the same objects.
 */
export const TOPOLVM_PROVISIONER = "topolvm.io";
/** Kubernetes' mark of the default StorageClass. */
export const DEFAULT_CLASS_ANNOTATION = "storageclass.kubernetes.io/is-default-class";
/**
 * On an LVMNodeSet: who creates its device classes' StorageClasses and VolumeSnapshotClasses.
 * "pulumi" (set by the NodeSet component, whose DeviceClass children create them): the operator
 * leaves them alone. Absent: the operator creates them.
 */
export const CLASSES_MANAGED_BY_ANNOTATION = "lvm.topolvm.io/device-class-objects";

/** The StorageClass for a device class, or undefined when its creationPolicy is Never. */
export function storageClassManifest(
  dc: ApiDeviceClass,
  extraLabels: Record<string, string>,
  clusterDefault = false,
) {
  const name = classObjectName(dc, dc.storageClass);
  if (name === undefined) return undefined;
  const settings = dc.storageClass ?? {};
  return {
    metadata: {
      name,
      labels: classLabels(dc, extraLabels),
      ...(clusterDefault ? { annotations: { [DEFAULT_CLASS_ANNOTATION]: "true" } } : {}),
    },
    provisioner: TOPOLVM_PROVISIONER,
    parameters: {
      ...settings.additionalParameters,
      "topolvm.io/device-class": dc.name,
      "csi.storage.k8s.io/fstype": dc.fsType ?? DEFAULTS.fsType,
    },
    reclaimPolicy: settings.reclaimPolicy ?? DEFAULTS.reclaimPolicy,
    volumeBindingMode: settings.volumeBindingMode ?? DEFAULTS.volumeBindingMode,
    allowVolumeExpansion: settings.allowVolumeExpansion ?? true,
  };
}

/** The VolumeSnapshotClass for a Thin device class, or undefined (Thick, or creationPolicy Never). */
export function snapshotClassManifest(dc: ApiDeviceClass, extraLabels: Record<string, string>) {
  if (dc.strategy !== "Thin") return undefined;
  const name = classObjectName(dc, dc.snapshotClass);
  if (name === undefined) return undefined;
  const settings = dc.snapshotClass ?? {};
  return {
    apiVersion: "snapshot.storage.k8s.io/v1",
    kind: "VolumeSnapshotClass",
    metadata: { name, labels: classLabels(dc, extraLabels) },
    driver: TOPOLVM_PROVISIONER,
    deletionPolicy: settings.deletionPolicy ?? "Delete",
    ...(settings.additionalParameters ? { parameters: settings.additionalParameters } : {}),
  };
}

function classLabels(dc: ApiDeviceClass, extra: Record<string, string>): Record<string, string> {
  return { ...extra, "app.kubernetes.io/part-of": "pulumi-lvm", "lvm.topolvm.io/device-class": dc.name };
}
