import { z } from "zod";
import { conditionsSchema } from "./conditions";
import { objectMetaSchema } from "./objectmeta";
import { rolloutSchema, rolloutStatusSchema } from "./rollout";
import { nodeSelectorSchema } from "./selectors";
import { templateSchema } from "./template";

export const API_GROUP = "lvm.topolvm.io";
export const API_VERSION = "v2alpha1";
export const GROUP_VERSION = `${API_GROUP}/${API_VERSION}`;

export const NODESET_STATES = [
  "Pending",
  "Progressing",
  "Ready",
  "Degraded",
  "Failed",
  "Terminating",
] as const;

export const lvmNodeSetSpecSchema = z
  .strictObject({
    nodeSelector: nodeSelectorSchema.optional(),
    template: templateSchema,
    rollout: rolloutSchema.optional(),
  })
  .meta({ description: "Which nodes, and what each of them gets." });

const count = (description: string) => z.number().int().min(0).optional().meta({ description });

export const lvmNodeSetStatusSchema = z
  .strictObject({
    state: z.enum(NODESET_STATES).optional().meta({ description: "Summary of the node set." }),
    observedGeneration: z.number().int().min(0).optional(),
    desiredNodes: count("The nodes the nodeSelector selects: one LVMNode each."),
    readyNodes: count("Selected nodes whose LVMNode is Ready."),
    degradedNodes: count("Selected nodes whose LVMNode is Degraded."),
    failedNodes: count(
      "Selected nodes that are Failed: their LVMNode is Failed, or it could not be written, or another set already manages the node.",
    ),
    nodes: z
      .array(
        z.strictObject({
          name: z.string().meta({ description: "The node (and its LVMNode)." }),
          state: z.enum(NODESET_STATES).meta({ description: "The LVMNode's state." }),
          message: z.string().optional().meta({ description: "Why, when not Ready." }),
        }),
      )
      .max(5000) // the largest cluster Kubernetes supports
      .optional()
      .meta({
        description:
          "The selected nodes that are not Ready, with their state (at most 100; the LVMNodesReady condition's message counts all of them). Each node's detail is in its LVMNode.",
      }),
    rollout: rolloutStatusSchema.optional(),
    conditions: conditionsSchema,
  })
  .meta({ description: "Observed state, written by the operator." });

export const lvmNodeSetSchema = z
  .strictObject({
    apiVersion: z.literal(GROUP_VERSION),
    kind: z.literal("LVMNodeSet"),
    metadata: objectMetaSchema,
    spec: lvmNodeSetSpecSchema,
    status: lvmNodeSetStatusSchema.optional(),
  })
  .meta({
    description:
      "LVM volume groups and TopoLVM device classes for the nodes its selector picks; like a DaemonSet, it creates one LVMNode per node.",
  });

export type LVMNodeSet = z.infer<typeof lvmNodeSetSchema>;
export type LVMNodeSetSpec = z.infer<typeof lvmNodeSetSpecSchema>;
export type LVMNodeSetStatus = z.infer<typeof lvmNodeSetStatusSchema>;
export type NodeSelector = z.infer<typeof nodeSelectorSchema>;
