import * as pulumi from "@pulumi/pulumi";
import { AgentHost, agentsOf, HostInventory, inventoriesOf, NodeSetDisks, type Template } from "pulumi-lvm";

const config = new pulumi.Config();

/** One host: its node name, address, SSH host key and SSH user (root, or a user with passwordless sudo). */
interface Host {
  name: string;
  address: string;
  /** The host's /etc/ssh/ssh_host_ed25519_key.pub: Pulumi refuses any other machine at `address`. */
  hostKey: string;
  user?: string;
  sshPort?: number;
  /** How Pulumi reaches the agent when not at https://<address>:9443 (a forwarded port, a load balancer). */
  agentUrl?: string;
}

// Replace these host keys with your hosts' own (`cat /etc/ssh/ssh_host_ed25519_key.pub` on each).
const hosts = config.getObject<Host[]>("hosts") ?? [
  {
    name: "edge-1",
    address: "10.0.0.11",
    hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBT0jr3oGrB+eSHEzi3iaVlpMZRob/L45wys06S1HQf1 root@edge-1",
  },
  {
    name: "edge-2",
    address: "10.0.0.12",
    hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOCZVxH6TuchEjm1jSLN3uU/E+hrlmdA/3WIVgcZCIvq root@edge-2",
  },
  {
    name: "edge-3",
    address: "10.0.0.13",
    hostKey: "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIAdFle2fY7tBnhyiy0jnBqHgTaK7FVnT3yYxdNzmAiQE root@edge-3",
  },
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
      hostKey: h.hostKey,
      ...(h.sshPort ? { port: h.sshPort } : {}),
      ...(h.agentUrl ? { agentUrl: h.agentUrl } : {}),
      user: h.user ?? "root",
      privateKey,
      bundle,
      // Change it (e.g. to the month) to give every agent a new token and serving certificate.
      credentialsRevision: config.get("credentialsRevision") ?? "",
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
