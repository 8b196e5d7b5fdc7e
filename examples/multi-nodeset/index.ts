import * as pulumi from "@pulumi/pulumi";
// In your own program: import { DeviceClass, LvmSystem, NodeSet, ... } from "pulumi-lvm";
import {
  DeviceClass,
  LvmSystem,
  NodeSet,
  type DeviceClassSpecArgs,
  type DeviceSelectorTermArgs,
  type TemplateArgs,
} from "../../src";

const config = new pulumi.Config();

/**
 * The device classes every zone offers, defined once. Workloads ask for "lvms-fast" or "lvms-bulk"
 * wherever they run; TopoLVM places each volume on a node that has the class, in the pod's zone.
 */
const fast: DeviceClassSpecArgs = {
  name: "fast",
  strategy: "Thin",
  volumeGroup: "vg-nvme",
  default: true,
  thin: { poolName: "pool0", sizePercent: 70, overprovisionRatio: 5 },
  snapshotClass: { deletionPolicy: "Delete" },
};
const bulk: DeviceClassSpecArgs = {
  name: "bulk",
  strategy: "Thick",
  volumeGroup: "vg-nvme",
  fsType: "ext4",
  storageClass: { reclaimPolicy: "Retain" },
};
const classes = [fast, bulk];

/** Zones differ in hardware, so each picks its disks its own way. */
const zones: Array<{ zone: string; disks: DeviceSelectorTermArgs[] }> = [
  {
    zone: "edge-north",
    disks: [{ matchExpressions: [{ key: "model", operator: "In", values: ["SAMSUNG MZQL23T8HCLS-00A07"] }] }],
  },
  {
    zone: "edge-south",
    disks: [
      {
        matchExpressions: [
          { key: "type", operator: "In", values: ["disk"] },
          { key: "rotational", operator: "In", values: ["false"] },
          { key: "size", operator: "GreaterThan", values: ["500Gi"] },
        ],
      },
    ],
  },
];

const system = new LvmSystem("lvm", {
  agentImage: config.get("agentImage") ?? "ghcr.io/pulumi-lvm/agent:0.1.0",
  tolerations: [{ operator: "Exists" }],
  topolvm: { chartVersion: "15.7.1", deviceClasses: classes },
});

// StorageClasses and VolumeSnapshotClasses are cluster-wide: one per device class, created here
// once. The zones' templates name the same classes with creationPolicy Never, so no two node sets
// manage the same object.
const clusterClasses = classes.map(
  (dc) => new DeviceClass(`cluster-${dc.name}`, { deviceClass: dc }, { dependsOn: [system] }),
);

const nodeSets = zones.map(({ zone, disks }) => {
  const template: TemplateArgs = {
    volumeGroups: [
      { name: "vg-nvme", deviceSelector: { deviceSelectorTerms: disks }, minDeviceSize: "100Gi" },
    ],
    deviceClasses: classes.map((dc) => ({
      ...dc,
      storageClass: { creationPolicy: "Never" },
      ...(dc.strategy === "Thin" ? { snapshotClass: { creationPolicy: "Never" } } : {}),
    })),
  };
  return new NodeSet(
    zone,
    {
      nodeSelector: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: [zone] }] },
        ],
      },
      template,
      labels: { "topology.kubernetes.io/zone": zone },
    },
    { dependsOn: [system] },
  );
});

export const storageClasses = clusterClasses.map((c) => c.storageClassName);
export const snapshotClasses = clusterClasses.map((c) => c.snapshotClassName);
export const nodeSetNames = nodeSets.map((n) => n.nodeSetName);
