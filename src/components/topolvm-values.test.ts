import type { DeviceClass } from "../api";
import { lvmdDeviceClasses, mergeValues, topolvmValues } from "./topolvm-values";

const thin: DeviceClass = {
  name: "fast",
  strategy: "Thin",
  volumeGroup: "vg-data",
  default: true,
  thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 5 },
};
const thick: DeviceClass = { name: "bulk", strategy: "Thick", volumeGroup: "vg-bulk", fsType: "ext4" };

describe("lvmdDeviceClasses", () => {
  test.each([
    [
      thin,
      {
        name: "fast",
        "volume-group": "vg-data",
        default: true,
        type: "thin",
        "thin-pool": { name: "pool0", "overprovision-ratio": 5 },
      },
    ],
    [thick, { name: "bulk", "volume-group": "vg-bulk", type: "thick", "spare-gb": 0 }],
    [
      { ...thick, default: false },
      { name: "bulk", "volume-group": "vg-bulk", type: "thick", "spare-gb": 0 },
    ],
  ])("%j → %j", (dc, entry) => {
    expect(lvmdDeviceClasses([dc])).toEqual([entry]);
  });
});

describe("mergeValues", () => {
  test.each([
    [{ a: 1 }, { b: 2 }, { a: 1, b: 2 }],
    [{ a: { x: 1, y: 1 } }, { a: { y: 2 } }, { a: { x: 1, y: 2 } }],
    [{ a: [1, 2] }, { a: [3] }, { a: [3] }],
    [{ a: { x: 1 } }, { a: "flat" }, { a: "flat" }],
    [{ a: "flat" }, { a: { x: 1 } }, { a: { x: 1 } }],
  ])("%j under %j → %j", (base, top, merged) => {
    expect(mergeValues(base, top)).toEqual(merged);
  });
});

describe("topolvmValues", () => {
  test("ours win over the user's lvmd and storage class settings; the rest is kept", () => {
    expect(
      topolvmValues({
        deviceClasses: [thick],
        values: {
          lvmd: { managed: false, socketName: "/x.sock", env: [{ name: "A", value: "1" }] },
          storageClasses: [{ name: "topolvm" }],
          scheduler: { enabled: true },
        },
      }),
    ).toEqual({
      lvmd: {
        managed: true,
        socketName: "/run/topolvm/lvmd.sock",
        env: [{ name: "A", value: "1" }],
        deviceClasses: [{ name: "bulk", "volume-group": "vg-bulk", type: "thick", "spare-gb": 0 }],
      },
      node: { lvmdSocket: "/run/topolvm/lvmd.sock" },
      storageClasses: [],
      scheduler: { enabled: true },
    });
  });
});
