import * as pulumi from "@pulumi/pulumi";
import { LvmSystem } from "../../src";
import { AcmeEdgeStorage } from "./acme-edge-storage";

const config = new pulumi.Config();
const site = config.get("site") ?? "ber-01";

const system = new LvmSystem("lvm", {
  agentImage: config.get("agentImage") ?? "registry.acme.example/storage/pulumi-lvm-agent:0.1.0",
  nodeSelector: { "acme.com/site": site },
  tolerations: [{ key: "acme.com/edge", operator: "Exists", effect: "NoSchedule" }],
  priorityClassName: "system-node-critical",
});

const storage = new AcmeEdgeStorage(
  site,
  {
    site,
    template: {
      volumeGroups: [
        {
          name: "vg-local",
          deviceSelector: {
            deviceSelectorTerms: [
              { matchExpressions: [{ key: "model", operator: "In", values: ["Micron_7450_MTFDKBG1T9TFR"] }] },
            ],
          },
        },
      ],
      deviceClasses: [
        {
          name: "local",
          strategy: "Thin",
          volumeGroup: "vg-local",
          default: true,
          thin: { poolName: "pool0", sizePercent: 95, overprovisionRatio: 4 },
        },
      ],
    },
  },
  { dependsOn: [system] },
);

export const storageClassNames = storage.storageClassNames;
