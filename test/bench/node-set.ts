import type { LVMNodeSet } from "../../src/api";

/** Matches the synthetic fleet: its owned group vg-pulumi (NVMe, thin pool "thinpool" at 90%) plus a wildcard HDD group. */
export const BENCH_NODE_SET: LVMNodeSet = {
  apiVersion: "lvm.topolvm.io/v2alpha1",
  kind: "LVMNodeSet",
  metadata: { name: "bench" },
  spec: {
    nodeSelector: {
      nodeSelectorTerms: [
        { matchExpressions: [{ key: "node-role.kubernetes.io/storage", operator: "In", values: ["true"] }] },
      ],
    },
    template: {
      volumeGroups: [
        {
          name: "vg-pulumi",
          deviceSelector: {
            deviceSelectorTerms: [
              { matchExpressions: [{ key: "model", operator: "In", values: ["SAMSUNG MZQL21T9"] }] },
            ],
          },
        },
        {
          name: "vg-hdd",
          minDeviceSize: "100Gi",
          deviceSelector: {
            deviceSelectorTerms: [
              {
                matchExpressions: [
                  { key: "kname", operator: "Any" },
                  { key: "rotational", operator: "In", values: ["true"] },
                ],
              },
            ],
          },
        },
      ],
      deviceClasses: [
        {
          name: "fast",
          strategy: "Thin",
          volumeGroup: "vg-pulumi",
          default: true,
          thin: { poolName: "thinpool", sizePercent: 90, overprovisionRatio: 10 },
        },
        { name: "bulk", strategy: "Thick", volumeGroup: "vg-hdd" },
      ],
    },
  },
};
