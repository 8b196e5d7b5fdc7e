import * as pulumi from "@pulumi/pulumi";
import {
  DeviceClass,
  LvmSystem,
  NodeSet,
  type DeviceClassSpec,
  type DeviceSelectorTerm,
  type TopolvmNodeSet,
} from "pulumi-lvm";

const config = new pulumi.Config();

/**
 * How each device class behaves wherever it is offered; each zone puts it on its own volume group.
 * Workloads ask for "lvms-fast" or "lvms-bulk" wherever they run; TopoLVM places each volume on a
 * node of the pod's zone that has the class.
 */
const fast = (volumeGroup: string): DeviceClassSpec => ({
  name: "fast",
  strategy: "Thin",
  volumeGroup,
  default: true,
  thin: { poolName: "pool0", sizePercent: 70, overprovisionRatio: 5 },
  snapshotClass: { deletionPolicy: "Delete" },
});
const bulk = (volumeGroup: string): DeviceClassSpec => ({
  name: "bulk",
  strategy: "Thick",
  volumeGroup,
  fsType: "ext4",
  storageClass: { reclaimPolicy: "Retain" },
});

/** Zones differ in hardware: each picks its disks its own way, into its own volume group, for its classes. */
const zones: Array<{
  zone: string;
  volumeGroup: string;
  disks: DeviceSelectorTerm[];
  classes: Array<(volumeGroup: string) => DeviceClassSpec>;
}> = [
  {
    zone: "edge-north",
    volumeGroup: "vg-nvme",
    disks: [{ matchExpressions: [{ key: "model", operator: "In", values: ["SAMSUNG MZQL23T8HCLS-00A07"] }] }],
    classes: [fast, bulk],
  },
  {
    zone: "edge-south",
    volumeGroup: "vg-sata",
    disks: [
      {
        matchExpressions: [
          { key: "type", operator: "In", values: ["disk"] },
          { key: "rotational", operator: "In", values: ["false"] },
          { key: "size", operator: "GreaterThan", values: ["500Gi"] },
        ],
      },
    ],
    classes: [fast],
  },
];

/**
 * One node set per zone. The same args go to its NodeSet and to TopoLVM, which runs one lvmd per
 * node set with exactly its classes on exactly its nodes: edge-south's lvmd never hears of vg-nvme.
 * StorageClasses are cluster-wide and created once, below, so the node sets only name the classes
 * (creationPolicy Never): no two node sets manage the same object.
 */
const nodeSets: TopolvmNodeSet[] = zones.map(({ zone, volumeGroup, disks, classes }) => ({
  name: zone,
  nodeSelector: {
    nodeSelectorTerms: [
      { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: [zone] }] },
    ],
  },
  template: {
    volumeGroups: [
      { name: volumeGroup, deviceSelector: { deviceSelectorTerms: disks }, minDeviceSize: "100Gi" },
    ],
    deviceClasses: classes
      .map((onGroup) => onGroup(volumeGroup))
      .map((dc) => ({
        ...dc,
        storageClass: { creationPolicy: "Never" },
        ...(dc.strategy === "Thin" ? { snapshotClass: { creationPolicy: "Never" } } : {}),
      })),
  },
}));

const system = new LvmSystem("lvm", {
  // Default: the image `npm run image` builds (docs/image.md); set agentImage to your registry's copy.
  agentImage: config.get("agentImage"),
  tolerations: [{ operator: "Exists" }],
  topolvm: { chartVersion: "15.7.1", nodeSets },
});

// One StorageClass (and, for Thin, VolumeSnapshotClass) per device class, from the first zone that
// offers it: a StorageClass names the device class, not the volume group behind it.
const offered = new Map<string, DeviceClassSpec>();
for (const { volumeGroup, classes } of zones)
  for (const dc of classes.map((onGroup) => onGroup(volumeGroup)))
    if (!offered.has(dc.name)) offered.set(dc.name, dc);
const clusterClasses = [...offered.values()].map(
  (dc) => new DeviceClass(`cluster-${dc.name}`, { deviceClass: dc }, { dependsOn: [system] }),
);

// `system`: each NodeSet depends on it and is checked against its topolvm.nodeSets entry, so a zone
// whose NodeSet and lvmd disagree (or a NodeSet missing from that list) stops the preview.
const zoneNodeSets = nodeSets.map(
  ({ name, nodeSelector, template }) =>
    new NodeSet(
      name,
      { nodeSelector, template, labels: { "topology.kubernetes.io/zone": name } },
      { system },
    ),
);

export const storageClasses = clusterClasses.map((c) => c.storageClassName);
export const snapshotClasses = clusterClasses.map((c) => c.snapshotClassName);
export const nodeSetNames = zoneNodeSets.map((n) => n.nodeSetName);
