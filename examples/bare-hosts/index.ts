import * as pulumi from "@pulumi/pulumi";
// In your own program: import { AgentHost, agentsOf, HostInventory, inventoriesOf, NodeSetDisks, type Template } from "pulumi-lvm";
import { AgentHost, agentsOf, HostInventory, inventoriesOf, NodeSetDisks, type Template } from "../../src";

const config = new pulumi.Config();

/** One host: its node name, address and SSH user (root, or a user with passwordless sudo). */
interface Host {
  name: string;
  address: string;
  user?: string;
  sshPort?: number;
  /** How Pulumi reaches the agent when not at https://<address>:9443 (a forwarded port, a load balancer). */
  agentUrl?: string;
}

const hosts = config.getObject<Host[]>("hosts") ?? [
  { name: "edge-1", address: "10.0.0.11" },
  { name: "edge-2", address: "10.0.0.12" },
  { name: "edge-3", address: "10.0.0.13" },
];
// `pulumi config set --secret sshPrivateKey -- "$(cat ~/.ssh/id_ed25519)"`: kept a secret everywhere.
const privateKey = config.requireSecret("sshPrivateKey");
// `bash scripts/agent-bundle.sh` in the pulumi-lvm checkout (or the package in node_modules) makes it.
const bundle = config.get("agentBundle") ?? "pulumi-lvm-agent-0.1.0.tgz";

/** The agent on each host: installed over SSH as a systemd unit, with its own token and certificate. */
const agentHosts = hosts.map(
  (h) =>
    new AgentHost(h.name, {
      nodeName: h.name,
      host: h.address,
      ...(h.sshPort ? { port: h.sshPort } : {}),
      ...(h.agentUrl ? { agentUrl: h.agentUrl } : {}),
      user: h.user ?? "root",
      privateKey,
      bundle,
      // Only these disks are visible to lvm on the host; the selector below picks among them.
      devices: config.getObject<string[]>("devices") ?? ["/dev/vdb", "/dev/vdc"],
    }),
);

/**
 * Each host's disks as `pulumi-lvm inventory` records them (reading only), over SSH after the agent's
 * install: the plans below are made from these, in preview. `inventoryRevision`: set a new value to
 * read the disks again (when they changed since).
 */
const inventories = agentHosts.map(
  (host, i) =>
    new HostInventory(
      `${hosts[i]!.name}-inventory`,
      { revision: config.get("inventoryRevision") ?? "" },
      { host },
    ),
);

/** One volume group from every disk over 10 GiB among the devices, with a thin pool on 90% of it. */
const template: Template = {
  volumeGroups: [
    {
      name: "vg-data",
      deviceSelector: {
        deviceSelectorTerms: [
          { matchExpressions: [{ key: "size", operator: "GreaterThan", values: ["10Gi"] }] },
        ],
      },
    },
  ],
  deviceClasses: [
    {
      name: "thin",
      strategy: "Thin",
      volumeGroup: "vg-data",
      default: true,
      thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
    },
  ],
};

/**
 * The disks of the three hosts, planned at preview from their recorded inventories and applied at up
 * through their agents, with the hash the preview showed (the CA each host made is the only one
 * trusted for it). No cluster: no LVMNodeSet, no StorageClasses; once Kubernetes runs on these hosts,
 * the same template goes into a NodeSet.
 */
const disks = new NodeSetDisks("edge-disks", {
  nodeSetName: "edge",
  namespace: "lvm-system",
  spec: template,
  agents: agentsOf(agentHosts),
  inventories: inventoriesOf(inventories),
});

export const agentUrls = agentHosts.map((h) => h.endpoint.url);
export const nodes = disks.nodes;
