import type { LVMNodeSetSpec } from "../../api";
import type { LVMNodeSetObject } from "../types";
import { desiredClassObjects } from "./classes";

const spec = {
  template: {
    volumeGroups: [],
    deviceClasses: [
      {
        name: "fast",
        strategy: "Thin",
        volumeGroup: "vg1",
        thin: { poolName: "p", sizePercent: 50, overprovisionRatio: 10 },
        snapshotClass: { namingPolicy: "Explicit", name: "fast-snaps" },
      },
      { name: "bulk", strategy: "Thick", volumeGroup: "vg1", storageClass: { creationPolicy: "Never" } },
    ],
  },
} as unknown as LVMNodeSetSpec;
const set = (annotations?: Record<string, string>) =>
  ({
    metadata: { name: "s", namespace: "storage", ...(annotations ? { annotations } : {}) },
  }) as LVMNodeSetObject;

describe("desiredClassObjects", () => {
  test("per device class what its policies give, marked as the operator's and the set's", () => {
    const objects = desiredClassObjects(set(), spec);
    expect(objects.map((o) => `${o.resource.kind}/${o.manifest.metadata.name}`)).toEqual([
      "StorageClass/lvms-fast",
      "VolumeSnapshotClass/fast-snaps",
    ]);
    for (const o of objects)
      expect(o.manifest.metadata).toMatchObject({
        labels: {
          "app.kubernetes.io/managed-by": "pulumi-lvm-operator",
          "lvm.topolvm.io/device-class": "fast",
        },
        annotations: { "lvm.topolvm.io/node-set": "storage/s" },
      });
    expect(objects[0]!.manifest).toMatchObject({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass" });
  });

  test("none for a set the NodeSet component made; any other value of the annotation does not opt out", () => {
    expect(desiredClassObjects(set({ "lvm.topolvm.io/device-class-objects": "pulumi" }), spec)).toEqual([]);
    expect(desiredClassObjects(set({ "lvm.topolvm.io/device-class-objects": "other" }), spec)).toHaveLength(
      2,
    );
  });
});
