import * as pulumi from "@pulumi/pulumi";
import { NodeSetDisks, type NodeResult } from "../../provider";
import { DeviceClass } from "./device-class";
import { DEFAULT_NAMESPACE, type LvmSystem } from "./lvm-system";
import type { NodeSelectorSpec, NodeSetTemplate } from "./spec-args";
import { servedNodeSetsOf, servedProblems, type ServedNodeSets } from "./served-node-sets";
import { argsProblems, throwIfInvalid } from "./validate-args";
import { checkLVMNodeSetSpec, type LVMNodeSetSpec, type ValidationProblem } from "../api";
import { VolumeGroup } from "./volume-group";
import { withDependencies } from "./depends-on";
import { DEFAULT_READY_TIMEOUT_SECONDS, lvmNodeSetResource } from "./node-set-resource";
import { nodeApprovals } from "./node-approvals";
import { defaultClassProblems, defaultNameProblems, otherArgsSchema } from "./node-set-validate";
import { recordNodeSet } from "./peer-facts";
import { secretArgProblems, secretArgsGuard, type SecretArgPath } from "./secret-args";

/** How Pulumi reaches one node's agent directly (the local sandbox; see NodeSetArgs.agents). */
export interface AgentEndpoint {
  /** The agent's base URL (an AgentHost's endpoint gives an Output). @example "http://127.0.0.1:9443" */
  readonly url: pulumi.Input<string>;
  /** A bearer token the agent accepts for this node; stored in state only as a secret. @example config.requireSecret("agentToken") */
  readonly token: pulumi.Input<string>;
  /**
   * PEM of the CA that signed an https agent's certificate, or of the agent's own certificate (an
   * AgentHost's): the only anchor trusted. @default the system CAs
   */
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
  /**
   * Plans to approve, by node: the hash of the plan waiting on that node's LVMNode under the set's
   * `approvalPolicy` (`pulumi-lvm status`, or `kubectl get lvmnode -n <namespace> <node> -o yaml`:
   * `status.pendingApproval`). `up` sets the approval on exactly those LVMNodes, through the
   * Kubernetes provider's credentials, which need the verb `approve` on lvmnodes (ClusterRole
   * pulumi-lvm-approver); the operator's webhook refuses a hash other than the waiting plan's,
   * naming that one, and the operator applies a plan only under the hash approved. An approval is
   * used once: remove it once its plan is applied. Not in sandbox mode (`agents`), where no operator
   * runs and `up` applies the plan the preview showed.
   * @default {}
   * @example { "worker-3": "738ce1b7e2f04a65a3c1d9f0b2e8c4a7d6f5e3b1a9c8d7e6f5a4b3c2d1e0f9a8" }
   */
  readonly approvals?: Record<string, pulumi.Input<string>>;
  /**
   * Whether `pulumi up` waits for the operator to build the set on its nodes: the set's
   * `LVMNodesReady` condition, for the generation just applied (every selected node's LVMNode
   * Ready: volume groups and device classes built and healthy). Its dependents (a Topolvm given this
   * node set, your workloads) are created only after that, so lvmd never starts on a node before its
   * volume group exists, and an up that cannot build them fails with the set's reason instead of
   * succeeding. Not the set's `Ready`: that one also waits for TopoLVM, which waits for this.
   * `false`: up returns once the LVMNodeSet is stored and the operator builds it afterwards
   * (`kubectl wait -n lvm-system lvmnodeset/<name> --for=condition=LVMNodesReady`).
   * @default true, except in sandbox mode (`agents`), where Pulumi applies the disks itself and no
   * operator need run
   */
  readonly awaitNodesReady?: boolean;
  /**
   * How long `pulumi up` waits for LVMNodesReady (awaitNodesReady) before it fails.
   * @default 600
   * @example 1800
   */
  readonly readyTimeoutSeconds?: number;
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
    const { spec, nodeSetName, namespace, readyTimeoutSeconds } = validate(
      name,
      args,
      system && servedNodeSetsOf(system),
    );
    const dependsOn = system ? withDependencies(resourceOpts.dependsOn, [system]) : resourceOpts.dependsOn;
    super(NODE_SET_TYPE, name, {}, { ...resourceOpts, ...(dependsOn ? { dependsOn } : {}) });
    // For the Topolvm given this node set.
    recordNodeSet(this, { name, nodeSetName, namespace, spec, ...(system ? { system } : {}) });
    const childOpts = { parent: this, dependsOn };
    // From another language, a token or kubeconfig given as a non-secret Output is refused here.
    const secrets = secretArgsGuard("NodeSet", name, args, NODE_SET_SECRET_ARGS);
    const agents =
      args.agents &&
      Object.fromEntries(
        Object.entries(args.agents).map(([node, a]) => [node, { ...a, token: secrets.hold(a.token) }]),
      );

    const cluster = args.cluster && {
      ...args.cluster,
      kubeconfig: secrets.hold(args.cluster.kubeconfig),
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
              ...(agents ? { agents } : {}),
              ...(cluster ? { cluster } : {}),
            },
            childOpts,
          )
        : undefined;

    lvmNodeSetResource(
      name,
      { nodeSetName, namespace, labels: args.labels, spec, readyTimeoutSeconds },
      // Applied by Pulumi through the agents (sandbox or cluster mode): the set changes only after its
      // disks did, so the operator, which applies every change of the set too, finds the node already
      // converged instead of racing Pulumi's apply of the plan the user saw (one of the two would be
      // refused with PlanChanged: test/journey, step 4).
      disks ? { ...childOpts, dependsOn: withDependencies(dependsOn, [disks]) } : childOpts,
    );

    // Not behind the LVMNodeSet: its await cannot end while a plan waits (node-approvals.ts).
    if (args.approvals) nodeApprovals(name, { namespace, approvals: args.approvals }, childOpts);

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

    const outputs = {
      nodeSetName: pulumi.output(nodeSetName),
      namespace: pulumi.output(namespace),
      storageClassNames: pulumi.output(storageClassNames),
      snapshotClassNames: pulumi.output(snapshotClassNames),
      nodes: disks ? disks.nodes : pulumi.output<Record<string, NodeResult>>({}),
    };
    // A refused secret arg fails each output (and so the construction through the component
    // provider); the outputs registered wait for the check instead, for one error, not two.
    this.nodeSetName = secrets.guard(outputs.nodeSetName);
    this.namespace = secrets.guard(outputs.namespace);
    this.storageClassNames = secrets.guard(outputs.storageClassNames);
    this.snapshotClassNames = secrets.guard(outputs.snapshotClassNames);
    this.nodes = secrets.guard(outputs.nodes);
    this.registerOutputs({
      nodeSetName: secrets.hold(outputs.nodeSetName),
      namespace: secrets.hold(outputs.namespace),
      storageClassNames: secrets.hold(outputs.storageClassNames),
      snapshotClassNames: secrets.hold(outputs.snapshotClassNames),
      nodes: secrets.hold(outputs.nodes),
    });
  }
}

export const NODE_SET_TYPE = "pulumi-lvm:index:NodeSet";

/** The args that must arrive as secrets through the component provider (secret-args.ts). */
const NODE_SET_SECRET_ARGS: readonly SecretArgPath[] = [
  ["agents", "*", "token"],
  ["cluster", "kubeconfig"],
];

const OTHER_ARG_KEYS: ReadonlySet<string> = new Set(Object.keys(otherArgsSchema.shape));

/** A NodeSet's args checked (every problem at once, by path) and resolved to what it creates. */
function validate(
  name: string,
  args: NodeSetArgs,
  served: ServedNodeSets | undefined,
): { spec: LVMNodeSetSpec; nodeSetName: string; namespace: string; readyTimeoutSeconds?: number } {
  // NodeSet's own args (otherArgsSchema's keys) apart from the LVMNodeSet spec's, each checked by
  // its own schema. Object.fromEntries defines each member, as the rest pattern did (no __proto__ setter).
  const entries = Object.entries(args ?? {});
  const other = Object.fromEntries(entries.filter(([key]) => OTHER_ARG_KEYS.has(key)));
  const spec = Object.fromEntries(entries.filter(([key]) => !OTHER_ARG_KEYS.has(key)));
  const {
    nodeSetName,
    namespace,
    defaultStorageClass,
    agents,
    cluster,
    approvals,
    awaitNodesReady,
    readyTimeoutSeconds,
  } = other as Pick<NodeSetArgs, keyof typeof otherArgsSchema.shape>;
  const problems: ValidationProblem[] = [
    ...argsProblems(otherArgsSchema, other),
    ...defaultNameProblems(name, nodeSetName),
  ];
  if (agents && cluster)
    problems.push({
      path: "args.cluster",
      message: "cannot be used together with agents: pick sandbox mode (agents) or cluster mode (cluster)",
    });
  if (agents && approvals && Object.keys(approvals).length)
    problems.push({
      path: "args.approvals",
      message:
        "cannot be used with agents: in sandbox mode no operator holds a plan for approval; up applies the plan the preview showed",
    });
  problems.push(...secretArgProblems(args, NODE_SET_SECRET_ARGS));
  const checked = checkLVMNodeSetSpec(spec, ["args"]);
  if (!checked.ok) problems.push(...checked.problems);
  else if (defaultStorageClass) problems.push(...defaultClassProblems(checked.value));
  else if (served) problems.push(...servedProblems(served, nodeSetName ?? name, nodeSetName, checked.value));
  if (awaitNodesReady === false && readyTimeoutSeconds !== undefined)
    problems.push({
      path: "args.readyTimeoutSeconds",
      message: "is set, but awaitNodesReady is false: up does not wait for the nodes",
    });
  throwIfInvalid("NodeSet", name, problems);
  // Sandbox mode: Pulumi applied the disks itself, and no operator need run to make the set Ready.
  const awaited = awaitNodesReady ?? !agents;
  return {
    spec: (checked as { value: LVMNodeSetSpec }).value,
    nodeSetName: nodeSetName ?? name,
    namespace: namespace ?? DEFAULT_NAMESPACE,
    ...(awaited ? { readyTimeoutSeconds: readyTimeoutSeconds ?? DEFAULT_READY_TIMEOUT_SECONDS } : {}),
  };
}
