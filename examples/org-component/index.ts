import * as pulumi from "@pulumi/pulumi";
import { LvmSystem } from "pulumi-lvm";
import { acmeNodeSet, AcmeEdgeStorage, type AcmeEdgeStorageArgs } from "./acme-edge-storage";

const config = new pulumi.Config();
const site = config.get("site") ?? "ber-01";

const storageArgs: AcmeEdgeStorageArgs = {
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
};

const system = new LvmSystem("lvm", {
  agentImage: config.get("agentImage") ?? "registry.acme.example/storage/pulumi-lvm:0.1.0",
  nodeSelector: { "acme.com/site": site },
  tolerations: [{ key: "acme.com/edge", operator: "Exists", effect: "NoSchedule" }],
  priorityClassName: "system-node-critical",
  topolvm: {
    chartVersion: config.get("topolvmChartVersion") ?? "15.7.1",
    // The site's node set as AcmeEdgeStorage creates it: one definition, so lvmd and the agents agree.
    nodeSets: [acmeNodeSet(storageArgs)],
  },
});

// `system`: the node set depends on it, and a template or selector that differs from its
// topolvm.nodeSets entry stops the preview.
const storage = new AcmeEdgeStorage(site, storageArgs, { system });

export const storageClassNames = storage.storageClassNames;
