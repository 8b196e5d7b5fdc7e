import * as pulumi from "@pulumi/pulumi";
import type { DeviceClass as ApiDeviceClass } from "../api";
import { DeviceClass, snapshotClassManifest, storageClassManifest } from "./device-class";
import type { DeviceClassSpec } from "./spec-args";
import {
  find,
  installMocks,
  ofType,
  runFailingProgram,
  runProgram,
} from "../../test/support/components/pulumi-mocks";

const SC = "kubernetes:storage.k8s.io/v1:StorageClass";
const VSC = "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass";

beforeAll(installMocks);

const thin: DeviceClassSpec = {
  name: "fast",
  strategy: "Thin",
  volumeGroup: "vg-data",
  thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
};
const thick: DeviceClassSpec = { name: "bulk", strategy: "Thick", volumeGroup: "vg-data" };

function outputOf<T>(o: pulumi.Output<T> | undefined): Promise<T | undefined> {
  return o ? new Promise((resolve) => o.apply(resolve)) : Promise.resolve(undefined);
}

describe("DeviceClass", () => {
  test("a Thin class gets a StorageClass and a VolumeSnapshotClass for topolvm.io, with the defaults", async () => {
    const recorded = await runProgram(() => new DeviceClass("edge-fast", { deviceClass: thin }));
    const sc = find(recorded, SC, "edge-fast-storage-class");
    expect(sc.parent).toEqual({ type: "pulumi-lvm:index:DeviceClass", name: "edge-fast" });
    expect(sc.inputs).toEqual({
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: {
        name: "lvms-fast",
        labels: { "app.kubernetes.io/part-of": "pulumi-lvm", "lvm.topolvm.io/device-class": "fast" },
      },
      provisioner: "topolvm.io",
      parameters: { "topolvm.io/device-class": "fast", "csi.storage.k8s.io/fstype": "xfs" },
      reclaimPolicy: "Delete",
      volumeBindingMode: "WaitForFirstConsumer",
      allowVolumeExpansion: true,
    });
    const vsc = find(recorded, VSC, "edge-fast-snapshot-class");
    expect(vsc.parent).toEqual({ type: "pulumi-lvm:index:DeviceClass", name: "edge-fast" });
    expect(vsc.inputs).toEqual({
      apiVersion: "snapshot.storage.k8s.io/v1",
      kind: "VolumeSnapshotClass",
      metadata: {
        name: "lvms-fast",
        labels: { "app.kubernetes.io/part-of": "pulumi-lvm", "lvm.topolvm.io/device-class": "fast" },
      },
      driver: "topolvm.io",
      deletionPolicy: "Delete",
    });
  });

  test("the StorageClass's immutable fields replace it, deleting first (the name stays)", async () => {
    const sc = find(
      await runProgram(() => new DeviceClass("edge-fast", { deviceClass: thin })),
      SC,
      "edge-fast-storage-class",
    );
    expect(sc.opts.replaceOnChanges).toEqual([
      "provisioner",
      "parameters",
      "reclaimPolicy",
      "volumeBindingMode",
    ]);
    expect(sc.opts.deleteBeforeReplace).toBe(true);
  });

  test("a Thick class has no VolumeSnapshotClass", async () => {
    const recorded = await runProgram(() => new DeviceClass("edge-bulk", { deviceClass: thick }));
    expect(ofType(recorded, SC).map((r) => r.inputs.metadata.name)).toEqual(["lvms-bulk"]);
    expect(ofType(recorded, VSC)).toEqual([]);
  });

  test("settings: naming, policies, fstype, expansion, extra parameters (ours win), labels", async () => {
    const dc: DeviceClassSpec = {
      ...thin,
      fsType: "ext4",
      storageClass: {
        namingPolicy: "Explicit",
        name: "edge.fast",
        reclaimPolicy: "Retain",
        volumeBindingMode: "Immediate",
        allowVolumeExpansion: false,
        additionalParameters: {
          "topolvm.io/device-class": "not-ours",
          "topolvm.io/lvcreate-option-class": "raid1",
        },
      },
      snapshotClass: {
        prefix: "acme",
        deletionPolicy: "Retain",
        additionalParameters: { "snapshot.example.com/tier": "gold" },
      },
    };
    const recorded = await runProgram(
      () => new DeviceClass("edge-fast", { deviceClass: dc, labels: { team: "platform" } }),
    );
    expect(find(recorded, SC, "edge-fast-storage-class").inputs).toMatchObject({
      metadata: { name: "edge.fast", labels: { team: "platform", "lvm.topolvm.io/device-class": "fast" } },
      parameters: {
        "topolvm.io/lvcreate-option-class": "raid1",
        "topolvm.io/device-class": "fast",
        "csi.storage.k8s.io/fstype": "ext4",
      },
      reclaimPolicy: "Retain",
      volumeBindingMode: "Immediate",
      allowVolumeExpansion: false,
    });
    expect(find(recorded, VSC, "edge-fast-snapshot-class").inputs).toMatchObject({
      metadata: { name: "acme-fast" },
      deletionPolicy: "Retain",
      parameters: { "snapshot.example.com/tier": "gold" },
    });
  });

  test("creationPolicy Never creates nothing, and the outputs are absent", async () => {
    let component: DeviceClass | undefined;
    const dc = {
      ...thin,
      storageClass: { creationPolicy: "Never" },
      snapshotClass: { creationPolicy: "Never" },
    };
    const recorded = await runProgram(() => (component = new DeviceClass("edge-fast", { deviceClass: dc })));
    expect(recorded.map((r) => r.type)).toEqual(["pulumi-lvm:index:DeviceClass"]);
    expect(component!.storageClassName).toBeUndefined();
    expect(component!.snapshotClassName).toBeUndefined();
    expect(await outputOf(component!.deviceClassName)).toBe("fast");
  });

  test("outputs the object names", async () => {
    let component: DeviceClass | undefined;
    await runProgram(
      () =>
        (component = new DeviceClass("edge-fast", {
          deviceClass: { ...thin, storageClass: { prefix: "edge" } },
        })),
    );
    expect(await outputOf(component!.storageClassName)).toBe("edge-fast");
    expect(await outputOf(component!.snapshotClassName)).toBe("lvms-fast");
  });

  test("validates its device class with the API's schema, paths from args", async () => {
    const { error, registered } = await runFailingProgram(
      () =>
        new DeviceClass("edge-bulk", {
          deviceClass: { ...thick, snapshotClass: {}, storageClass: { namingPolicy: "Explicit" } },
        }),
    );
    expect(error.message).toBe(
      [
        'DeviceClass "edge-bulk" is invalid:',
        "  args.deviceClass.storageClass.name: namingPolicy Explicit needs name",
        "  args.deviceClass.snapshotClass: is only supported for strategy Thin (TopoLVM snapshots are thin snapshots)",
      ].join("\n"),
    );
    expect(registered).toBe(0);
  });
});

describe("manifests", () => {
  test("storageClassManifest is undefined for creationPolicy Never; snapshotClassManifest for Thick", () => {
    expect(
      storageClassManifest({ ...(thin as ApiDeviceClass), storageClass: { creationPolicy: "Never" } }, {}),
    ).toBeUndefined();
    expect(snapshotClassManifest(thick as ApiDeviceClass, {})).toBeUndefined();
  });
});
