import * as path from "node:path";
import * as pulumi from "@pulumi/pulumi";
import { ValidationError } from "../../api";
import type { LvmSystem } from "../lvm-system";
import { NodeSet } from "../node-set";
import {
  find,
  installMocks,
  ofType,
  runFailingProgram,
  runProgramDirectory,
  type Recorded,
} from "../../../test/support/components/pulumi-mocks";
import { chartOnNode } from "../../../test/support/components/topolvm-chart";
import { lvmdDeviceClasses } from "../topolvm-values";
// TopoLVM's own rules for lvmd.yaml, written down from its source (the conformance suite's model).
import { topolvmLvmdProblems } from "../../../test/conformance/topolvm-lvmd";

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

test("one NodeSet per zone, each with its own volume group and classes, and no class objects of its own", () => {
  expect(ofType(recorded, "pulumi-lvm:index:NodeSet").map((r) => r.name)).toEqual([
    "edge-north",
    "edge-south",
  ]);
  const children = (zone: string) =>
    recorded.filter((r) => r.parent?.name === zone).map((r) => [r.type, r.name]);
  expect(children("edge-north")).toEqual([
    ["kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "edge-north"],
    ["pulumi-lvm:index:VolumeGroup", "edge-north-vg-nvme"],
    ["pulumi-lvm:index:DeviceClass", "edge-north-fast"],
    ["pulumi-lvm:index:DeviceClass", "edge-north-bulk"],
  ]);
  expect(children("edge-south")).toEqual([
    ["kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "edge-south"],
    ["pulumi-lvm:index:VolumeGroup", "edge-south-vg-sata"],
    ["pulumi-lvm:index:DeviceClass", "edge-south-fast"],
  ]);
  for (const dc of ["edge-north-fast", "edge-north-bulk", "edge-south-fast"])
    expect(recorded.filter((r) => r.parent?.name === dc)).toEqual([]);
});

test("each zone selects its own nodes and disks, into its own volume group", () => {
  const north = find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "edge-north").inputs;
  const south = find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "edge-south").inputs;
  expect(north.spec.nodeSelector.nodeSelectorTerms[0].matchExpressions).toEqual([
    { key: "topology.kubernetes.io/zone", operator: "In", values: ["edge-north"] },
  ]);
  expect(north.metadata.labels).toEqual({ "topology.kubernetes.io/zone": "edge-north" });
  expect(north.spec.template.volumeGroups[0]).toMatchObject({
    name: "vg-nvme",
    deviceSelector: {
      deviceSelectorTerms: [
        { matchExpressions: [{ key: "model", operator: "In", values: ["SAMSUNG MZQL23T8HCLS-00A07"] }] },
      ],
    },
  });
  expect(south.spec.template.volumeGroups[0].name).toBe("vg-sata");
  expect(
    south.spec.template.volumeGroups[0].deviceSelector.deviceSelectorTerms[0].matchExpressions,
  ).toContainEqual({ key: "size", operator: "GreaterThan", values: ["500Gi"] });
  const classes = (cr: typeof north) =>
    cr.spec.template.deviceClasses.map((dc: { name: string; strategy: string; volumeGroup: string }) => [
      dc.name,
      dc.strategy,
      dc.volumeGroup,
    ]);
  expect(classes(north)).toEqual([
    ["fast", "Thin", "vg-nvme"],
    ["bulk", "Thick", "vg-nvme"],
  ]);
  expect(classes(south)).toEqual([["fast", "Thin", "vg-sata"]]);
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

const zone = (name: string) => ({
  nodeSelectorTerms: [
    { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: [name] }] },
  ],
});
const onlyOn = (selector: object) => ({
  nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: selector },
});

test("TopoLVM runs one lvmd per zone, with that zone's classes on its volume group, on its nodes only", () => {
  const { lvmd, node } = find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm").inputs.values;
  const linux = { "kubernetes.io/os": "linux" };
  const everyTaint = [{ operator: "Exists" }];
  const fastOn = (volumeGroup: string) => ({
    name: "fast",
    "volume-group": volumeGroup,
    default: true,
    type: "thin",
    "spare-gb": 0,
    "thin-pool": { name: "pool0", "overprovision-ratio": 5 },
  });
  // edge-north: the chart's own lvmd (DaemonSet topolvm-lvmd-0).
  expect(lvmd).toMatchObject({
    managed: true,
    socketName: "/run/topolvm/lvmd.sock",
    deviceClasses: [
      fastOn("vg-nvme"),
      { name: "bulk", "volume-group": "vg-nvme", type: "thick", "spare-gb": 0 },
    ],
    nodeSelector: linux,
    tolerations: everyTaint,
    affinity: onlyOn(zone("edge-north")),
  });
  // edge-south: the first additional lvmd (topolvm-lvmd-1), with no bulk and no vg-nvme.
  expect(lvmd.additionalConfigs).toEqual([
    {
      deviceClasses: [fastOn("vg-sata")],
      nodeSelector: linux,
      tolerations: everyTaint,
      affinity: onlyOn(zone("edge-south")),
    },
  ]);
  expect(node).toEqual({
    lvmdEmbedded: false,
    lvmdSocket: "/run/topolvm/lvmd.sock",
    nodeSelector: linux,
    tolerations: everyTaint,
    affinity: onlyOn({
      nodeSelectorTerms: [...zone("edge-north").nodeSelectorTerms, ...zone("edge-south").nodeSelectorTerms],
    }),
  });
});

test("every lvmd configuration of the chart is one TopoLVM's lvmd accepts", () => {
  const { lvmd } = find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm").inputs.values;
  for (const config of [lvmd, ...lvmd.additionalConfigs])
    expect(
      topolvmLvmdProblems({ "socket-name": lvmd.socketName, "device-classes": config.deviceClasses }),
    ).toEqual([]);
});

test("on every node, the chart's lvmd serves what the LVMNodeSet that selects it tells the agents", () => {
  const values = find(recorded, "kubernetes:helm.sh/v4:Chart", "lvm-topolvm").inputs.values;
  const crs = ofType(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet");
  for (const label of ["edge-north", "edge-south", "edge-west", undefined]) {
    const node = {
      name: "node-1",
      labels: { "kubernetes.io/os": "linux", ...(label ? { "topology.kubernetes.io/zone": label } : {}) },
    };
    const cr = crs.find((c) => c.name === label);
    const { lvmdDeviceClasses: served, topolvmNode } = chartOnNode(values, node);
    expect(served).toEqual(cr ? [lvmdDeviceClasses(cr.inputs.spec.template.deviceClasses)] : []);
    expect(topolvmNode).toBe(cr !== undefined);
  }
});

test("each zone's NodeSet is given the system: it depends on it, and one that strays from its entry is refused", async () => {
  const system = find(recorded, "pulumi-lvm:index:LvmSystem", "lvm").resource as LvmSystem;
  for (const zone of ["edge-north", "edge-south"])
    expect(find(recorded, "pulumi-lvm:index:NodeSet", zone).opts.dependsOn).toEqual([system]);
  const north = find(recorded, "kubernetes:lvm.topolvm.io/v2alpha1:LVMNodeSet", "edge-north").inputs.spec;
  const stray = {
    nodeSelector: north.nodeSelector,
    template: {
      ...north.template,
      volumeGroups: [{ ...north.template.volumeGroups[0], minDeviceSize: "50Gi" }],
    },
  };
  const { error, registered } = await runFailingProgram(() => new NodeSet("edge-north", stray, { system }));
  expect(error).toEqual(
    new ValidationError('NodeSet "edge-north"', [
      {
        path: "args.template.volumeGroups[0].minDeviceSize",
        message: `is "50Gi", but LvmSystem "lvm" has "100Gi" at args.topolvm.nodeSets[0].template.volumeGroups[0].minDeviceSize, from which TopoLVM's lvmd is configured: give both the same value`,
      },
    ]),
  );
  expect(registered).toBe(0);
  const west = await runFailingProgram(() => new NodeSet("edge-west", stray, { system }));
  expect((west.error as ValidationError).problems.map((p) => p.path)).toEqual(["args.nodeSetName"]);
});
