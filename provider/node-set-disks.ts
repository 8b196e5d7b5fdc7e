import * as pulumi from "@pulumi/pulumi";
import type { NodeSelector, Template } from "../src/api";
import { nodeSetDisksProvider } from "./provider";

/** Inputs of a NodeSetDisks. */
export interface NodeSetDisksArgs {
  /** metadata.name of the LVMNodeSet these disks belong to. */
  readonly nodeSetName: string;
  readonly namespace: string;
  /** The validated template every node gets (sent to the agents as the LVMNode spec). */
  readonly spec: Template;
  /** Sandbox mode: node name → its agent's URL and bearer token (kept as a secret). Exclusive with `cluster`. */
  readonly agents?: Readonly<
    Record<
      string,
      {
        readonly url: pulumi.Input<string>;
        readonly token: pulumi.Input<string>;
        readonly caCertificate?: pulumi.Input<string>;
      }
    >
  >;
  /**
   * Sandbox mode with recorded inventories: node → `pulumi-lvm inventory`'s output on that host (a
   * HostInventory's `inventory`; `inventoriesOf`). Each node is then planned from its inventory, in
   * preview already, instead of by asking its agent; apply sends that plan's hash to the agent, which
   * refuses if its disks plan otherwise, and a node whose inventory this update collected is applied
   * only after a preview has shown its plan. Every node of `agents` needs one.
   */
  readonly inventories?: Readonly<Record<string, pulumi.Input<string>>>;
  /**
   * Cluster mode: the agents are the agent DaemonSet's pods in `namespace` on the nodes
   * `nodeSelector` picks, called through the API server's pod proxy with the kubeconfig's user and
   * a short-lived token for `serviceAccountName`. Exclusive with `agents`.
   */
  readonly cluster?: {
    /** The kubeconfig's text (kept as a secret). */
    readonly kubeconfig: pulumi.Input<string>;
    /** @default the kubeconfig's current-context */
    readonly context?: string;
    /** The service account the agents accept (the LvmSystem's provisioner). */
    readonly serviceAccountName: pulumi.Input<string>;
    /** The node set's nodeSelector. @default every node */
    readonly nodeSelector?: NodeSelector;
  };
}

/** What one node's agent planned and applied. */
export interface NodeResult {
  readonly selected: boolean;
  /** The plan hash that was reviewed and applied. */
  readonly planHash: string;
  /** Steps the last apply ran, and skipped because they were already done. */
  readonly stepsDone: number;
  readonly stepsSkipped: number;
  /** The agent's operation id of the last apply, when there was anything to do. */
  readonly operation?: string;
  /** What the planner would not do on the node, and why. */
  readonly blocked: string[];
  /** The LVMNode state the agent reported at the last refresh. */
  readonly state?: string;
  /**
   * Volume group → its state (Healthy, Degraded, ...), its physical volumes and, when not Healthy,
   * why (the steps still to do, with their lvm commands), at the last refresh.
   */
  readonly volumeGroups?: Record<string, VolumeGroupResult>;
  /** The agent's last operation and its result, at the last refresh. */
  readonly lastOperation?: string;
  /** Why the last apply failed on this node while other nodes applied; the next `pulumi up` retries it. */
  readonly error?: string;
  /** Why nothing was applied on this node yet: its plan, from an inventory this update collected, was not previewed. */
  readonly pending?: string;
}

/** One volume group of a node, as its agent reported it at the last refresh. */
export interface VolumeGroupResult {
  /** Healthy, Degraded, Failed, Progressing, Missing or Pending. */
  readonly state: string;
  /** Its physical volumes (kernel names), sorted. */
  readonly members: string[];
  /** Why it is not Healthy: the steps still to do (with their lvm commands), blocked reasons, a failure. */
  readonly message?: string;
}

/**
 * The disks of one node set's nodes, applied by their agents (sandbox or cluster mode of NodeSet).
 * Preview shows each node's plan (devices claimed, extended, removed, wiped, excluded and why) in
 * the `plans` input; update applies exactly those plans, refusing nodes whose disks changed since;
 * delete honours the template's deletionPolicy (Retain: nothing happens on the disks).
 */
export class NodeSetDisks extends pulumi.dynamic.Resource {
  // `declare`, not a class field: pulumi.Resource's constructor sets the outputs, and an ES2022 field
  // (the package's dist/) would reset them to undefined right after it.
  /** Node → the plan summary reviewed at preview (set by the provider's check). */
  declare public readonly plans: pulumi.Output<Record<string, unknown>>;
  /** Node → what its agent applied. */
  declare public readonly nodes: pulumi.Output<Record<string, NodeResult>>;

  constructor(name: string, args: NodeSetDisksArgs, opts?: pulumi.CustomResourceOptions) {
    const agents = Object.fromEntries(
      Object.entries(args.agents ?? {}).map(([node, agent]) => [
        node,
        {
          url: agent.url,
          token: pulumi.secret(agent.token),
          ...(agent.caCertificate ? { ca: agent.caCertificate } : {}),
        },
      ]),
    );
    super(
      nodeSetDisksProvider,
      name,
      {
        nodeSetName: args.nodeSetName,
        namespace: args.namespace,
        spec: args.spec,
        ...(args.agents ? { agents } : {}),
        ...(args.inventories ? { inventories: args.inventories } : {}),
        ...(args.cluster
          ? {
              cluster: {
                kubeconfig: pulumi.secret(args.cluster.kubeconfig),
                serviceAccount: args.cluster.serviceAccountName,
                ...(args.cluster.context ? { context: args.cluster.context } : {}),
                ...(args.cluster.nodeSelector ? { nodeSelector: args.cluster.nodeSelector } : {}),
              },
            }
          : {}),
        plans: undefined,
        nodes: undefined,
      },
      // Tokens and kubeconfigs must never be stored in plain text, whatever the provider returns.
      {
        ...opts,
        additionalSecretOutputs: [...(opts?.additionalSecretOutputs ?? []), "agents", "cluster"],
      },
      "pulumi-lvm",
      "NodeSetDisks",
    );
  }
}
