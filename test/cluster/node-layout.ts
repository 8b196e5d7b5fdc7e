/**
 * The storage of the cluster tier's CI node (topolvm.test.ts): its test disks, the LVMNode spec that
 * lays them out (a thin class on a pool, a thick class; a spare disk no selector matches, which the
 * agent must leave alone), and the StorageClass and VolumeSnapshotClass names LvmSystem derives
 * from those classes (the same function, classObjectName).
 */
import { classObjectName, type DeviceClass, type LVMNodeSpec } from "../../src/api";

const GiB = 1024 ** 3;
export const NODE_SET = "cluster";
export const THIN_VG = "pl-thin";
export const THICK_VG = "pl-thick";
export const SPARE_SERIAL = "SN-SPARE-0";
export const DISKS = [
  { sizeBytes: 4 * GiB, serial: "SN-THIN-0" },
  // 3 GiB: the 1Gi claim expanded to 2Gi fits, a 5Gi claim does not.
  { sizeBytes: 3 * GiB, serial: "SN-THICK-0" },
  // Matches no selector: the agent must leave it alone.
  { sizeBytes: 1 * GiB, serial: SPARE_SERIAL },
];
export const DEVICE_CLASSES: DeviceClass[] = [
  {
    name: "thin",
    strategy: "Thin",
    volumeGroup: THIN_VG,
    default: true,
    thin: { poolName: "pool", sizePercent: 90, overprovisionRatio: 10 },
  } as DeviceClass,
  { name: "thick", strategy: "Thick", volumeGroup: THICK_VG } as DeviceClass,
];

function selector(serial: string) {
  return {
    deviceSelectorTerms: [{ matchExpressions: [{ key: "serial", operator: "In", values: [serial] }] }],
  };
}

export const SPEC = {
  volumeGroups: [
    { name: THIN_VG, deviceSelector: selector(DISKS[0]!.serial), minDeviceSize: "64Mi" },
    { name: THICK_VG, deviceSelector: selector(DISKS[1]!.serial), minDeviceSize: "64Mi" },
  ],
  deviceClasses: DEVICE_CLASSES,
} as unknown as LVMNodeSpec;
/** StorageClass names by device class name. */
export const SC = Object.fromEntries(DEVICE_CLASSES.map((dc) => [dc.name, classObjectName(dc, undefined)!]));
