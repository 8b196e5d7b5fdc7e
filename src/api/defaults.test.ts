import { classObjectName, DEFAULTS, deletionPolicyOf, minDeviceSizeBytes, wipeAllowed } from "./defaults";
import type { VolumeGroup } from "./template";

const vg = (extra: Partial<VolumeGroup> = {}): VolumeGroup => ({
  name: "vg1",
  deviceSelector: { deviceSelectorTerms: [{ matchExpressions: [{ key: "kname", operator: "Any" }] }] },
  ...extra,
});

test("minDeviceSize defaults to 1Gi", () => {
  expect(minDeviceSizeBytes(vg())).toBe(1024 ** 3);
  expect(minDeviceSizeBytes(vg({ minDeviceSize: "100G" }))).toBe(100e9);
});

test("wiping needs the explicit opt-in", () => {
  expect(wipeAllowed(vg())).toBe(false);
  expect(wipeAllowed(vg({ forceWipeDevicesAndDestroyAllData: false }))).toBe(false);
  expect(wipeAllowed(vg({ forceWipeDevicesAndDestroyAllData: true }))).toBe(true);
});

test("deletionPolicy defaults to Retain", () => {
  expect(deletionPolicyOf({})).toBe("Retain");
  expect(deletionPolicyOf({ deletionPolicy: "Delete" })).toBe("Delete");
});

test.each([
  [undefined, "lvms-fast"],
  [{}, "lvms-fast"],
  [{ prefix: "ssd" }, "ssd-fast"],
  [{ namingPolicy: "Explicit" as const, name: "local-fast" }, "local-fast"],
  [{ creationPolicy: "Never" as const }, undefined],
])("class object name for %j: %s", (settings, name) => {
  expect(classObjectName({ name: "fast" }, settings)).toBe(name);
});

test("the documented defaults are the ones the schemas describe", () => {
  expect(DEFAULTS).toEqual({
    minDeviceSize: "1Gi",
    deletionPolicy: "Retain",
    fsType: "xfs",
    classPrefix: "lvms",
    reclaimPolicy: "Delete",
    volumeBindingMode: "WaitForFirstConsumer",
    lvmdSocket: "/run/topolvm/lvmd.sock",
  });
});
