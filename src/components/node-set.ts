import { CLASSES_MANAGED_BY_ANNOTATION } from "../api/class-objects";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { z } from "zod";
import {
  checkLVMNodeSetSpec,
  classObjectName,
  dnsSubdomainProblem,
  GROUP_VERSION,
  type LVMNodeSetSpec,
  type ValidationProblem,
} from "../api";
import { NodeSetDisks, type NodeResult } from "../../provider";
import { DeviceClass } from "./device-class";
import { DEFAULT_NAMESPACE, type LvmSystem } from "./lvm-system";
import type { NodeSelectorSpec, NodeSetTemplate } from "./spec-args";
import { servedNodeSetsOf, servedProblems, type ServedNodeSets } from "./served-node-sets";
import {
  argsProblems,
  labels,
  namespaceName,
  nonEmptyStringInput,
  objectName,
  throwIfInvalid,
} from "./validate-args";
import { VolumeGroup } from "./volume-group";
import { withDependencies } from "./depends-on";
import { recordNodeSet } from "./peer-facts";

/** How Pulumi reaches one node's agent directly (the local sandbox; see NodeSetArgs.agents). */
export interface AgentEndpoint {
  /** The agent's base URL (an AgentHost's endpoint gives an Output). @example "http://127.0.0.1:9443" */
  readonly url: pulumi.Input<string>;
  /** A bearer token the agent accepts for this node; stored in state only as a secret. @example config.requireSecret("agentToken") */
  readonly token: pulumi.Input<string>;
  /** PEM of the CA that signed an https agent's certificate (pinned: the only CA trusted). @default the system CAs */
  readonly caCertificate?: pulumi.Input<string>;
}

/** How Pulumi reaches the agents inside a cluster (see NodeSetArgs.cluster). */
export interface ClusterMode {
  /**
   * A kubeconfig (its text) for the cluster's API server. Its user lists the nodes and the agent
   * pods, calls the agents through the API server's pod proxy and requests a short-lived token for
   * `serviceAccountName`: the LvmSystem's cluster-mode roles (`clusterModeSubjects`), or cluster
   * admin. Tokens, client certificates or token files; no exec plugins. Stored only as a secret.
   * @example config.requireSecret("kubeconfig")
   */
  readonly kubeconfig: pulumi.Input<string>;
  /** The kubeconfig context to use. @default its current-context @example "edge-prod" */
  readonly context?: string;
  /**
   * The service account the agents accept calls from, whose token (audience pulumi-lvm-agent, 10
   * minutes) is requested for every operation and never stored: the LvmSystem's provisioner.
   * @example system.provisionerServiceAccountName
   */
  readonly serviceAccountName: pulumi.Input<string>;
}

/** Arguments of a NodeSet. */
export interface NodeSetArgs {
  /** metadata.name of the LVMNodeSet. @default the component's name @example "edge-zone-a" */
  readonly nodeSetName?: string;
  /**
   * Namespace of the LVMNodeSet and of the LVMNodes it owns: the LvmSystem's namespace, the only one
   * its operator watches and its provisioner may act in.
   * @default "lvm-system"
   */
  readonly namespace?: string;
  /** Labels of the LVMNodeSet, StorageClasses and VolumeSnapshotClasses. @default {} @example { team: "platform" } */
  readonly labels?: Record<string, string>;
  /**
   * Mark the StorageClass of the template's default device class (`default: true`) as the cluster's
   * default StorageClass (`storageclass.kubernetes.io/is-default-class`), as LVMS does. Refused when
   * no class is the default or it creates no StorageClass. Keep it to one node set of the cluster.
   * @default false
   */
  readonly defaultStorageClass?: boolean;
  /**
   * Which nodes get the template (core/v1 NodeSelector).
   * @default every node
   * @example { nodeSelectorTerms: [{ matchExpressions: [{ key: "topology.kubernetes.io/zone", operator: "In", values: ["edge-1"] }] }] }
   */
  readonly nodeSelector?: NodeSelectorSpec;
  /** The volume groups and device classes every selected node gets. */
  readonly template: NodeSetTemplate;
  /**
   * Sandbox mode: node name → its agent. When set, Pulumi itself plans and applies the template on
   * exactly these nodes through their agents (POST /v1/plan at preview, /v1/apply at update), and
   * per-node results appear in NodeSet.nodes; the node selector is not evaluated (the agents
   * do not know their labels). Exclusive with `cluster`. When neither is set, the in-cluster operator
   * does the work from the LVMNodeSet.
   * @default {}
   * @example { "node-a": { url: "http://127.0.0.1:9443", token: config.requireSecret("agentToken") } }
   */
  readonly agents?: Record<string, AgentEndpoint>;
  /**
   * Cluster mode: Pulumi plans and applies the template on every node the nodeSelector picks, through
   * the agent DaemonSet's pods (in `namespace`), reached through the Kubernetes API server. Preview
   * shows each node's plan; per-node results appear in NodeSet.nodes. Exclusive with `agents`.
   * @default not set
   * @example { kubeconfig: config.requireSecret("kubeconfig"), serviceAccountName: system.provisionerServiceAccountName }
   */
  readonly cluster?: ClusterMode;
}

/**
 * Options of a NodeSet: Pulumi's resource options and the LvmSystem that serves it. An option, not an
 * arg: Pulumi's schema inference takes no component classes as args.
 */
export interface NodeSetOptions extends pulumi.ComponentResourceOptions {
  /**
   * The LvmSystem whose agents, operator and TopoLVM serve this node set. The NodeSet depends on it (as
   * with dependsOn), and when it installs TopoLVM, its topolvm.nodeSets must list this node set (its
   * nodeSetName) with the same nodeSelector and template, compared after validation: lvmd is
   * configured from that copy. Anything else is a validation error naming both paths, before anything
   * registers.
   * @default none: nothing checked
   * @example { system }
   */
  readonly system?: LvmSystem;
}

/**
 * An LVMNodeSet: volume groups and TopoLVM device classes for the nodes its selector picks. Its
 * children are the custom resource itself, one VolumeGroup per volume group, one
 * DeviceClass (StorageClass, VolumeSnapshotClass) per device class, and, in sandbox or cluster
 * mode, the per-node disk state applied through the agents.
 */
export class NodeSet extends pulumi.ComponentResource {
  /** metadata.name of the LVMNodeSet. */
  public readonly nodeSetName!: pulumi.Output<string>;
  /** Its namespace. */
  public readonly namespace!: pulumi.Output<string>;
  /** Device class name → its StorageClass name (classes with creationPolicy Never are absent). */
  public readonly storageClassNames!: pulumi.Output<Record<string, string>>;
  /** Device class name → its VolumeSnapshotClass name (Thin classes whose snapshot class is created). */
  public readonly snapshotClassNames!: pulumi.Output<Record<string, string>>;
  /** Node name → what its agent planned and applied; empty unless `agents` or `cluster` is set. */
  public readonly nodes!: pulumi.Output<Record<string, NodeResult>>;

  constructor(name: string, args: NodeSetArgs, opts?: NodeSetOptions) {
    const { system, ...resourceOpts } = opts ?? {};
    const { spec, nodeSetName, namespace } = validate(name, args, system && servedNodeSetsOf(system));
    const dependsOn = system ? withDependencies(resourceOpts.dependsOn, [system]) : resourceOpts.dependsOn;
    super(NODE_SET_TYPE, name, {}, { ...resourceOpts, ...(dependsOn ? { dependsOn } : {}) });
    // For the Topolvm given this node set.
    recordNodeSet(this, { name, nodeSetName, namespace, spec, ...(system ? { system } : {}) });
    const childOpts = { parent: this, dependsOn };

    const cluster = args.cluster && {
      ...args.cluster,
      ...(spec.nodeSelector ? { nodeSelector: spec.nodeSelector } : {}),
    };
    const disks =
      args.agents || cluster
        ? new NodeSetDisks(
            `${name}-disks`,
            {
              nodeSetName,
              namespace,
              spec: spec.template,
              ...(args.agents ? { agents: args.agents } : {}),
              ...(cluster ? { cluster } : {}),
            },
            childOpts,
          )
        : undefined;

    new k8s.apiextensions.CustomResource(
      name,
      {
        apiVersion: GROUP_VERSION,
        kind: "LVMNodeSet",
        // No empty labels map: the API server drops it, and the provider would then see a change on
        // every preview.
        metadata: {
          name: nodeSetName,
          namespace,
          ...(Object.keys(args.labels ?? {}).length ? { labels: args.labels } : {}),
          // Its DeviceClass children make the StorageClasses and VolumeSnapshotClasses: the operator must not.
          annotations: { [CLASSES_MANAGED_BY_ANNOTATION]: "pulumi" },
        },
        spec,
      },
      // Applied by Pulumi through the agents (sandbox or cluster mode): the set changes only after its
      // disks did, so the operator, which applies every change of the set too, finds the node already
      // converged instead of racing Pulumi's apply of the plan the user saw (one of the two would be
      // refused with PlanChanged: test/journey, step 4).
      disks ? { ...childOpts, dependsOn: withDependencies(dependsOn, [disks]) } : childOpts,
    );

    for (const vg of spec.template.volumeGroups)
      new VolumeGroup(`${name}-${vg.name}`, { volumeGroup: vg }, childOpts);
    const storageClassNames: Record<string, pulumi.Output<string>> = {};
    const snapshotClassNames: Record<string, pulumi.Output<string>> = {};
    for (const dc of spec.template.deviceClasses ?? []) {
      // Children of the node set, not of their volume group: moving a class to another group must not
      // change its URN (that would create the same-named StorageClass before deleting the old one).
      const deviceClass = new DeviceClass(
        `${name}-${dc.name}`,
        {
          deviceClass: dc,
          labels: args.labels ?? {},
          ...(args.defaultStorageClass && dc.default ? { clusterDefault: true } : {}),
        },
        childOpts,
      );
      if (deviceClass.storageClassName) storageClassNames[dc.name] = deviceClass.storageClassName;
      if (deviceClass.snapshotClassName) snapshotClassNames[dc.name] = deviceClass.snapshotClassName;
    }

    this.nodeSetName = pulumi.output(nodeSetName);
    this.namespace = pulumi.output(namespace);
    this.storageClassNames = pulumi.output(storageClassNames);
    this.snapshotClassNames = pulumi.output(snapshotClassNames);
    this.nodes = disks ? disks.nodes : pulumi.output<Record<string, NodeResult>>({});
    this.registerOutputs({
      nodeSetName: this.nodeSetName,
      namespace: this.namespace,
      storageClassNames: this.storageClassNames,
      snapshotClassNames: this.snapshotClassNames,
      nodes: this.nodes,
    });
  }
}

export const NODE_SET_TYPE = "pulumi-lvm:index:NodeSet";

/** A URL checked when it is known; an Output (an AgentHost's endpoint) is checked by the provider. */
const agentUrl = z.union([
  z.custom<pulumi.Output<string>>((v) => pulumi.Output.isInstance(v)),
  z.string().superRefine((url, ctx) => {
    let parsed: URL | undefined;
    try {
      parsed = new URL(url);
    } catch {
      // reported below
    }
    if (!parsed || (parsed.protocol !== "http:" && parsed.protocol !== "https:"))
      ctx.addIssue({
        code: "custom",
        message: `must be an http:// or https:// URL (got ${JSON.stringify(url)})`,
      });
  }),
]);

/** The args besides the spec (nodeSelector, template), which the API's own schema checks. */
const otherArgsSchema = z.strictObject({
  nodeSetName: objectName.optional(),
  namespace: namespaceName.optional(),
  labels: labels.optional(),
  defaultStorageClass: z.boolean().optional(),
  agents: z
    .record(
      z.string(),
      z.strictObject({
        url: agentUrl,
        token: nonEmptyStringInput,
        caCertificate: z
          .union([z.string(), z.custom<pulumi.Output<string>>((v) => pulumi.Output.isInstance(v))])
          .optional(),
      }),
    )
    .superRefine((agents, ctx) => {
      for (const node of Object.keys(agents)) {
        const problem = dnsSubdomainProblem(node);
        if (problem)
          ctx.addIssue({ code: "custom", path: [node], message: `is not a node name: it ${problem}` });
      }
    })
    .optional(),
  cluster: z
    .strictObject({
      kubeconfig: nonEmptyStringInput,
      context: z.string().min(1).optional(),
      serviceAccountName: nonEmptyStringInput,
    })
    .optional(),
});

function validate(
  name: string,
  args: NodeSetArgs,
  served: ServedNodeSets | undefined,
): { spec: LVMNodeSetSpec; nodeSetName: string; namespace: string } {
  const {
    nodeSetName,
    namespace,
    labels: nodeSetLabels,
    defaultStorageClass,
    agents,
    cluster,
    ...spec
  } = args ?? ({} as NodeSetArgs);
  const problems: ValidationProblem[] = [
    ...argsProblems(otherArgsSchema, {
      nodeSetName,
      namespace,
      labels: nodeSetLabels,
      defaultStorageClass,
      agents,
      cluster,
    }),
    ...defaultNameProblems(name, nodeSetName),
  ];
  if (agents && cluster)
    problems.push({
      path: "args.cluster",
      message: "cannot be used together with agents: pick sandbox mode (agents) or cluster mode (cluster)",
    });
  const checked = checkLVMNodeSetSpec(spec, ["args"]);
  if (!checked.ok) problems.push(...checked.problems);
  else if (defaultStorageClass) problems.push(...defaultClassProblems(checked.value));
  else if (served) problems.push(...servedProblems(served, nodeSetName ?? name, nodeSetName, checked.value));
  throwIfInvalid("NodeSet", name, problems);
  return {
    spec: (checked as { value: LVMNodeSetSpec }).value,
    nodeSetName: nodeSetName ?? name,
    namespace: namespace ?? DEFAULT_NAMESPACE,
  };
}

/** defaultStorageClass needs a default device class that creates its StorageClass. */
function defaultClassProblems(spec: LVMNodeSetSpec): ValidationProblem[] {
  const dc = (spec.template.deviceClasses ?? []).find((c) => c.default);
  if (!dc)
    return [
      {
        path: "args.defaultStorageClass",
        message: "is true, but no device class of the template is the default",
      },
    ];
  if (classObjectName(dc, dc.storageClass) === undefined)
    return [
      {
        path: "args.defaultStorageClass",
        message: `is true, but the default device class "${dc.name}" creates no StorageClass (storageClass.creationPolicy Never)`,
      },
    ];
  return [];
}

function defaultNameProblems(name: string, nodeSetName: string | undefined): ValidationProblem[] {
  if (nodeSetName !== undefined) return [];
  const problem = dnsSubdomainProblem(name);
  return problem
    ? [
        {
          path: "args.nodeSetName",
          message: `defaults to the component name, which ${problem}; set nodeSetName`,
        },
      ]
    : [];
}
