import * as pulumi from "@pulumi/pulumi";
import {
  LvmSystem,
  NodeSet,
  Topolvm,
  type AgentEndpoint,
  type NodeSelectorSpec,
  type NodeSetTemplate,
} from "pulumi-lvm";

const config = new pulumi.Config();

/** The nodes labelled node-role.kubernetes.io/storage=true. */
const nodeSelector: NodeSelectorSpec = {
  nodeSelectorTerms: [
    { matchExpressions: [{ key: "node-role.kubernetes.io/storage", operator: "In", values: ["true"] }] },
  ],
};

/**
 * One volume group from two disks picked by serial, and one thin device class on it. Config
 * `volumeGroup`, `deviceClass` (its StorageClass is lvms-<deviceClass>) and `deletionPolicy` (Retain,
 * the default: the volume group stays on destroy; Delete: removed, once no PVC uses it).
 */
// Your disks, by serial (`lsblk -o NAME,SERIAL`): required, no default — a program never guesses disks.
const diskSerials = config.requireObject<string[]>("diskSerials");
const volumeGroup = config.get("volumeGroup") ?? "vg-data";
const deviceClass = config.get("deviceClass") ?? "thin";
const deletionPolicy = config.get("deletionPolicy") as "Retain" | "Delete" | undefined;
const template: NodeSetTemplate = {
  ...(deletionPolicy ? { deletionPolicy } : {}),
  volumeGroups: [
    {
      name: volumeGroup,
      deviceSelector: {
        deviceSelectorTerms: [
          {
            matchExpressions: [
              {
                key: "serial",
                operator: "In",
                values: diskSerials,
              },
            ],
          },
        ],
      },
    },
  ],
  deviceClasses: [
    {
      name: deviceClass,
      strategy: "Thin",
      volumeGroup,
      default: true,
      thin: { poolName: "pool0", sizePercent: 90, overprovisionRatio: 10 },
      // StorageClass and VolumeSnapshotClass "lvms-thin" (the API's default naming).
    },
  ],
};

// Air-gapped sites (and a local cluster): the agent image and TopoLVM's chart from where you keep
// them, by config — `agentImage` (+ `agentImagePullPolicy: Never` for an image loaded on the nodes),
// `topolvmChartPath` (a chart directory or .tgz) or `topolvmRepository` (an HTTP or oci:// mirror),
// and `topolvmValues` (e.g. TopoLVM's own image from a mirror).
const topolvmChartPath = config.get("topolvmChartPath");
const topolvmRepository = config.get("topolvmRepository");
const topolvmValues = config.getObject<Record<string, unknown>>("topolvmValues");
const agentImagePullPolicy = config.get("agentImagePullPolicy");
// Extra operator flags (`pulumi-lvm operator --help`), e.g. a longer leader Lease on slow nodes.
const operatorArgs = config.getObject<string[]>("operatorArgs");
// Operator replicas (default 2: a leader and a standby); 1 on a one-node cluster.
const operatorReplicas = config.getNumber("operatorReplicas");
// How long the API server waits for the operator's admission webhook (1–30 s, default 10): slow
// nodes need more, or set changes and the deletion guard are refused for the delay alone.
const webhookTimeoutSeconds = config.getNumber("webhookTimeoutSeconds");

const system = new LvmSystem("lvm", {
  // Default: the image `npm run image` builds for this version (docs/image.md); set agentImage to your
  // registry's copy of it.
  agentImage: config.get("agentImage"),
  ...(agentImagePullPolicy ? { agentImagePullPolicy } : {}),
  operator: {
    ...(operatorArgs ? { args: operatorArgs } : {}),
    ...(operatorReplicas ? { replicas: operatorReplicas } : {}),
    ...(webhookTimeoutSeconds ? { admission: { timeoutSeconds: webhookTimeoutSeconds } } : {}),
  },
  tolerations: [{ key: "node-role.kubernetes.io/storage", operator: "Exists", effect: "NoSchedule" }],
});

// Sandbox mode: set `agentUrl` (and the secret `agentToken`) to let Pulumi plan and apply through a
// node agent directly; `pulumi preview` then shows the node's plan.
const agentUrl = config.get("agentUrl");
const agents: Record<string, AgentEndpoint> | undefined = agentUrl
  ? { [config.get("node") ?? "node-1"]: { url: agentUrl, token: config.requireSecret("agentToken") } }
  : undefined;

// Cluster mode (platform teams): set `clusterMode: true` and the secret `kubeconfig` (its text) once the
// system's agents run (after a first `pulumi up`); Pulumi then plans through them via the API server,
// and `pulumi preview` shows each node's plan (claimed, extended, excluded and why) before `up`.
const cluster = config.getBoolean("clusterMode")
  ? {
      kubeconfig: config.requireSecret("kubeconfig"),
      serviceAccountName: system.provisionerServiceAccountName,
    }
  : undefined;

// A plan that would wipe a signature or add a disk to the built group waits for a person
// (approvalPolicy Destructive, the default). `pulumi-lvm status` shows it with its hash; config
// `approvals` (node → hash, e.g. `pulumi config set --path 'approvals.worker-1' <hash>`) approves it.
const approvals = config.getObject<Record<string, string>>("approvals");

const nodeSet = new NodeSet(
  "quickstart",
  {
    nodeSelector,
    template,
    ...(agents ? { agents } : {}),
    ...(cluster ? { cluster } : {}),
    ...(approvals ? { approvals } : {}),
  },
  // Served by the system: depends on it (its CRDs, agents and operator exist first).
  { system },
);

// TopoLVM, its lvmd configured from the node set itself. It depends on the node set: on a first
// `pulumi up` the LVMNodeSet exists before the chart, so the operator builds the volume group and
// thin pool while lvmd starts (and retries until they exist) instead of the chart waiting for them.
new Topolvm(
  "lvm-topolvm",
  {
    chartVersion: config.get("topolvmChartVersion") ?? "15.7.1",
    ...(topolvmChartPath ? { chartPath: topolvmChartPath } : {}),
    ...(topolvmRepository ? { repository: topolvmRepository } : {}),
    ...(topolvmValues ? { values: topolvmValues } : {}),
  },
  { system, nodeSets: [nodeSet] },
);

export const namespace = system.namespace;
export const storageClass = nodeSet.storageClassNames.apply((names) => names[deviceClass]);
export const snapshotClass = nodeSet.snapshotClassNames.apply((names) => names[deviceClass]);
export const nodes = nodeSet.nodes;
