import type { NodeSetArgs } from "../../../src/components/node-set";

/** A node set template with one volume group, a Thin and a Thick device class. */
export function edgeArgs(): NodeSetArgs {
  return {
    nodeSelector: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["edge-1"] }] },
      ],
    },
    template: {
      volumeGroups: [
        {
          name: "vg-data",
          deviceSelector: {
            deviceSelectorTerms: [
              { matchExpressions: [{ key: "serial", operator: "In", values: ["SN-AAA111", "SN-BBB222"] }] },
            ],
          },
          minDeviceSize: "10Gi",
        },
      ],
      deviceClasses: [
        {
          name: "fast",
          strategy: "Thin",
          volumeGroup: "vg-data",
          default: true,
          thin: { poolName: "pool0", sizePercent: 60, overprovisionRatio: 10 },
        },
        { name: "bulk", strategy: "Thick", volumeGroup: "vg-data", fsType: "ext4" },
      ],
    },
  };
}
