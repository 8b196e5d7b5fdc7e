import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { find, installMocks, ofType, runProgramDirectory, type Recorded } from "../testing/pulumi-mocks";

/** examples/multi-nodeset against mocks. */
const program = path.resolve(__dirname, "../../../examples/multi-nodeset");

function outputOf<T>(o: pulumi.Output<T>): Promise<T> {
  return new Promise((resolve) => o.apply(resolve));
}

let recorded: Recorded[];
let exported: Record<string, unknown>;
beforeAll(async () => {
  await installMocks();
  ({ recorded, exports: exported } = await runProgramDirectory(program));
});

test("one NodeSet per zone, each with its VolumeGroup and both DeviceClasses, and no classes of its own", () => {
  expect(ofType(recorded, "pulumi-lvm:index:NodeSet").map((r) => r.name)).toEqual([
    "edge-north",
    "edge-south",
  ]);
  for (const zone of ["edge-north", "edge-south"]) {
    expect(recorded.filter((r) => r.parent?.name === zone).map((r) => [r.type, r.name])).toEqual([
      ["kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", zone],
      ["pulumi-lvm:index:VolumeGroup", `${zone}-vg-nvme`],
      ["pulumi-lvm:index:DeviceClass", `${zone}-fast`],
      ["pulumi-lvm:index:DeviceClass", `${zone}-bulk`],
    ]);
    for (const dc of ["fast", "bulk"])
      expect(recorded.filter((r) => r.parent?.name === `${zone}-${dc}`)).toEqual([]);
  }
});

test("each zone selects its own nodes and disks; the classes are the same everywhere", () => {
  const north = find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "edge-north").inputs;
  const south = find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "edge-south").inputs;
  expect(north.spec.nodeSelector.nodeSelectorTerms[0].matchExpressions).toEqual([
    { key: "topology.kubernetes.io/zone", operator: "In", values: ["edge-north"] },
  ]);
  expect(north.metadata.labels).toEqual({ "topology.kubernetes.io/zone": "edge-north" });
  expect(
    north.spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions[0],
  ).toEqual({
    key: "model",
    operator: "In",
    values: ["SAMSUNG MZQL23T8HCLS-00A07"],
  });
  expect(
    south.spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions,
  ).toContainEqual({
    key: "size",
    operator: "GreaterThan",
    values: ["500Gi"],
  });
  expect(north.spec.template.deviceClasses).toEqual(south.spec.template.deviceClasses);
  expect(
    north.spec.template.deviceClasses.map((dc: { name: string; strategy: string }) => [dc.name, dc.strategy]),
  ).toEqual([
    ["fast", "Thin"],
    ["bulk", "Thick"],
  ]);
});

test("StorageClasses and the VolumeSnapshotClass exist once, cluster-wide", async () => {
  expect(
    ofType(recorded, "kubernetes:storage.k8s.io/v1:StorageClass").map((r) => [
      r.name,
      r.parent?.name,
      r.inputs.metadata.name,
      r.inputs.parameters,
    ]),
  ).toEqual([
    [
      "cluster-fast-storage-class",
      "cluster-fast",
      "lvms-fast",
      { "topolvm.io/device-class": "fast", "csi.storage.k8s.io/fstype": "xfs" },
    ],
    [
      "cluster-bulk-storage-class",
      "cluster-bulk",
      "lvms-bulk",
      { "topolvm.io/device-class": "bulk", "csi.storage.k8s.io/fstype": "ext4" },
    ],
  ]);
  expect(
    find(recorded, "kubernetes:storage.k8s.io/v1:StorageClass", "cluster-bulk-storage-class").inputs
      .reclaimPolicy,
  ).toBe("Retain");
  expect(
    ofType(recorded, "kubernetes:snapshot.storage.k8s.io/v1:VolumeSnapshotClass").map(
      (r) => r.inputs.metadata.name,
    ),
  ).toEqual(["lvms-fast"]);
  expect(await outputOf(pulumi.output(exported.storageClasses as pulumi.Output<string>[]))).toEqual([
    "lvms-fast",
    "lvms-bulk",
  ]);
  expect(
    await outputOf(pulumi.output(exported.snapshotClasses as Array<pulumi.Output<string> | undefined>)),
  ).toEqual(["lvms-fast", undefined]);
});

test("TopoLVM's lvmd serves both classes on every node", () => {
  expect(
    find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm").inputs.values.lvmd.deviceClasses,
  ).toEqual([
    {
      name: "fast",
      "volume-group": "vg-nvme",
      default: true,
      type: "thin",
      "thin-pool": { name: "pool0", "overprovision-ratio": 5 },
    },
    { name: "bulk", "volume-group": "vg-nvme", type: "thick", "spare-gb": 0 },
  ]);
});
