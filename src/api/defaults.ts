import type { DeviceClass, SnapshotClassSettings, StorageClassSettings, VolumeGroup } from "./template";
import { DEFAULT_LVMD_SOCKET, type LVMNodeSpec } from "./lvmnode";
import { quantityToBytes } from "./quantity";

/**
 * Defaults are not injected by the schemas (so manifests round-trip exactly as written); code that
 * acts on a spec reads them through these functions. docs/api.md lists the same values.
 */
export const DEFAULTS = {
  minDeviceSize: "1Gi",
  deletionPolicy: "Retain",
  fsType: "xfs",
  classPrefix: "lvms",
  reclaimPolicy: "Delete",
  volumeBindingMode: "WaitForFirstConsumer",
  lvmdSocket: DEFAULT_LVMD_SOCKET,
} as const;

export function minDeviceSizeBytes(vg: VolumeGroup): number {
  return quantityToBytes(vg.minDeviceSize ?? DEFAULTS.minDeviceSize);
}

export function wipeAllowed(vg: VolumeGroup): boolean {
  return vg.forceWipeDevicesAndDestroyAllData === true;
}

export function deletionPolicyOf(spec: Pick<LVMNodeSpec, "deletionPolicy">): "Retain" | "Delete" {
  return spec.deletionPolicy ?? DEFAULTS.deletionPolicy;
}

/**
 * The name of the StorageClass or VolumeSnapshotClass for a device class, or undefined when
 * creationPolicy is Never.
 */
export function classObjectName(
  deviceClass: Pick<DeviceClass, "name">,
  settings: StorageClassSettings | SnapshotClassSettings | undefined,
): string | undefined {
  if (settings?.creationPolicy === "Never") return undefined;
  if (settings?.namingPolicy === "Explicit") return settings.name;
  return `${settings?.prefix ?? DEFAULTS.classPrefix}-${deviceClass.name}`;
}
