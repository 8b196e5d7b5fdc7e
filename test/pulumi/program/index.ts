/**
 * The Pulumi program of the engine end-to-end test (test/pulumi/engine-e2e.test.ts): one node set's
 * disks on one node, applied through that node's agent by the NodeSetDisks dynamic provider.
 * Everything that differs between runs comes from the stack's config:
 *
 *   node            the node's name                    pulumi config set node node-e2e
 *   agentUrl        its agent's base URL                pulumi config set agentUrl http://127.0.0.1:9443
 *   agentToken      a bearer token the agent accepts    pulumi config set --secret agentToken ...
 *   volumeGroup     the volume group to build           pulumi config set volumeGroup vg-data
 *   devices         the device paths it may take        pulumi config set --path 'devices[0]' /dev/loop7
 *   deletionPolicy  Retain (default) or Delete          pulumi config set deletionPolicy Retain
 *
 * Several nodes (test/pulumi/partial-failure.test.ts) instead of node/agentUrl/agentToken:
 *
 *   agentUrls       node → its agent's base URL         pulumi config set --path agentUrls.node-a http://...
 *   agentTokens     node → its agent's token (secret)   pulumi config set --secret --path agentTokens.node-a ...
 */
import * as pulumi from "@pulumi/pulumi";
import type { Template } from "../../../src/api";
import { NodeSetDisks } from "../../../provider/node-set-disks";

const config = new pulumi.Config();
const volumeGroup = config.require("volumeGroup");

const spec: Template = {
  volumeGroups: [
    {
      name: volumeGroup,
      minDeviceSize: "64Mi",
      deviceSelector: {
        deviceSelectorTerms: [
          {
            matchExpressions: [
              { key: "path", operator: "In", values: config.requireObject<string[]>("devices") },
            ],
          },
        ],
      },
    },
  ],
  deviceClasses: [{ name: `${volumeGroup}-thick`, strategy: "Thick", volumeGroup, default: true }],
  // Checked by the provider (an unknown policy is a preview error naming the field).
  deletionPolicy: (config.get("deletionPolicy") ?? "Retain") as Template["deletionPolicy"],
};

const disks = new NodeSetDisks("disks", {
  nodeSetName: "e2e",
  namespace: "lvm-system",
  spec,
  agents: agents(),
});

/** node → its agent: one node (node, agentUrl, agentToken) or several (agentUrls, agentTokens). */
function agents(): Record<string, { url: string; token: pulumi.Output<string> }> {
  const urls = config.getObject<Record<string, string>>("agentUrls");
  if (!urls)
    return {
      [config.require("node")]: {
        url: config.require("agentUrl"),
        token: config.requireSecret("agentToken"),
      },
    };
  // requireSecretObject: the whole map is a secret output, and so is each token taken from it.
  const tokens = config.requireSecretObject<Record<string, string>>("agentTokens");
  return Object.fromEntries(
    Object.entries(urls).map(([node, url]) => [
      node,
      {
        url,
        token: tokens.apply((t) => {
          if (!t[node]) throw new Error(`agentTokens has no token for node ${node}`);
          return t[node];
        }),
      },
    ]),
  );
}

/** Node → what its agent applied (the refreshed state is in the resource's outputs). */
export const nodes = disks.nodes;
