/**
 * The user's journey on a local cluster, as `npm run demo` and test/journey run it: the cluster
 * tier's node (test/cluster/cluster.ts) with the quickstart's disks, the images loaded into it, and
 * examples/quickstart run by the real Pulumi engine with the real Kubernetes provider
 * (pulumi-resource-kubernetes 4.32.0, no download) and pointed by config at this repository's image
 * and TopoLVM's chart on disk. Then what a user does next: a PVC on the thin class and a pod writing
 * to it. Everything is checked with the cluster's own API and the node's own lvm tools.
 *
 * Nothing is skipped: a missing binary throws one error naming each and the command that builds it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { DEFAULT_IMAGE } from "../../src/version";
import { requireClusterBinaries, type ClusterBinaries } from "../cluster/binaries";
import { startCluster, type Cluster } from "../cluster/cluster";
import {
  PAUSE_IMAGE,
  TOOLS_IMAGE,
  pauseImage,
  productImages,
  snapshotControllerImage,
  toolsImage,
  topolvmImage,
  topolvmImageArchive,
  TOPOLVM_REPOSITORY,
} from "../cluster/images";
import { apply, eventsOf, podLine, podsIn } from "../cluster/objects";
import { boundVolume, checksumIn, claimObject, runWithClaims } from "../cluster/workloads";
import { installSnapshotController, UNDER_TCG_VALUES } from "../cluster/topolvm";
import { CHART_VERSION, chartDir } from "../env/topolvm-chart";
import type { Json } from "../env/cluster";
import { PulumiWorkspace, requirePulumiBinaries } from "../pulumi/cli";
import { requireKubernetesPlugin } from "../pulumi/kubernetes-plugin";
import { REPO_ROOT, requireVmArtifacts } from "../vm/guest";

const GiB = 1024 ** 3;
export const QUICKSTART_DIR = path.join(REPO_ROOT, "examples", "quickstart");
/** The label the quickstart's node selector asks for. */
export const STORAGE_LABEL = "node-role.kubernetes.io/storage";
/**
 * The quickstart's default serials (two disks, vg-data), a third disk its selector does not match
 * (it must be left alone), and a fourth that the journey adds to the selector later (config
 * `diskSerials`): "a disk added" without hot-plugging one into the guest.
 */
export const QUICKSTART_DISKS = [
  { sizeBytes: 4 * GiB, serial: "SN-AAA111" },
  { sizeBytes: 4 * GiB, serial: "SN-BBB222" },
  { sizeBytes: 2 * GiB, serial: "SN-OTHER333" },
  { sizeBytes: 2 * GiB, serial: "SN-CCC444" },
] as const;
export const SELECTED_SERIALS = ["SN-AAA111", "SN-BBB222"];
/** The disk the journey's step 4 adds to the quickstart's selector. */
export const ADDED_SERIAL = "SN-CCC444";
export const NAMESPACE = "lvm-system";
export const STORAGE_CLASS = "lvms-thin";

export interface JourneyBinaries {
  readonly cluster: ClusterBinaries;
  readonly kubernetesPlugin: string;
}

/** Everything the journey runs, checked before anything starts; one error lists what is missing. */
export function requireJourneyBinaries(): JourneyBinaries {
  const errors: string[] = [];
  const check = <T>(f: () => T): T | undefined => {
    try {
      return f();
    } catch (e) {
      errors.push((e as Error).message);
      return undefined;
    }
  };
  check(() => requireVmArtifacts());
  const cluster = check(() => requireClusterBinaries("topolvm"));
  check(() => requirePulumiBinaries());
  const kubernetesPlugin = check(() => requireKubernetesPlugin());
  if (errors.length || !cluster || !kubernetesPlugin) throw new Error(errors.join("\n"));
  return { cluster, kubernetesPlugin };
}

/** The node's images: the ones that rarely change go into the cached state disk (startCluster's
 * `seededImages`: pause, tools, TopoLVM, snapshot controller, and our image's Debian layer); ours
 * (npm run image) is imported on each boot, where only its package layer is new to the node. */
export interface JourneyImages {
  readonly seeded: readonly string[];
  readonly images: readonly string[];
}

export async function journeyImages(
  bins: ClusterBinaries,
  log: (line: string) => void,
): Promise<JourneyImages> {
  const { product: ours, base } = await productImages(log);
  log(
    `image ${ours.name}: ${ours.archive} (layers cached: Debian ${ours.cached.debian}, package ${ours.cached.bundle})`,
  );
  return {
    seeded: [
      await pauseImage(bins),
      await toolsImage(),
      await topolvmImageArchive(bins),
      await snapshotControllerImage(bins),
      base,
    ],
    images: [ours.archive],
  };
}

/**
 * The node with the quickstart's disks, Ready, labelled as a storage node (the kubelet may not set
 * node-role labels itself), and the snapshot CRDs and controller a cluster has before TopoLVM.
 */
export async function startJourneyCluster({ seeded, images }: JourneyImages): Promise<Cluster> {
  const cluster = await startCluster({
    disks: QUICKSTART_DISKS,
    seededImages: seeded,
    images,
    sandboxImage: PAUSE_IMAGE,
    memoryMiB: 4096,
    readyTimeoutMs: 600_000,
  });
  try {
    const r = await cluster.cp.request("PATCH", `/api/v1/nodes/${cluster.nodeName}`, {
      metadata: { labels: { [STORAGE_LABEL]: "true" } },
    });
    if (r.status !== 200) throw new Error(`labelling node ${cluster.nodeName}: HTTP ${r.status}`);
    await installSnapshotController(cluster.cp);
    return cluster;
  } catch (e) {
    await cluster.stop();
    throw e;
  }
}

/**
 * The operator's leader election on the emulated node: its defaults (Lease 15 s, renew within 10 s)
 * assume a node that answers in milliseconds. Under TCG, beside other work, the pod could not renew
 * for 10 s and the replicas exited and restarted over and over (a journey's step 2 took 600 s instead
 * of 50). A user with slow nodes does the same through the quickstart's `operatorArgs`.
 */
export const OPERATOR_ARGS_UNDER_TCG = [
  "--leader-election-lease-duration",
  "90s",
  "--leader-election-renew-deadline",
  "60s",
  "--leader-election-retry-period",
  "5s",
];

/**
 * A stack of examples/quickstart (file backend and PULUMI_HOME under `root`, the kubernetes plugin
 * linked in, KUBECONFIG the cluster's admin), configured as a user of a local cluster would: this
 * repository's image (already on the node: pull policy Never), TopoLVM's chart from disk with its
 * images, one controller replica (one node).
 */
export function quickstartStack(
  root: string,
  cluster: Cluster,
  kubernetesPlugin: string,
  kubeconfigPath = cluster.cp.kubeconfigPath,
): PulumiWorkspace {
  const ws = new PulumiWorkspace("demo", "demo-passphrase-local-only", {
    root,
    projectFile: path.join(QUICKSTART_DIR, "Pulumi.yaml"),
    plugins: [kubernetesPlugin],
    env: { KUBECONFIG: kubeconfigPath },
  });
  ws.init();
  const project = (YAML.parse(fs.readFileSync(path.join(QUICKSTART_DIR, "Pulumi.yaml"), "utf8")) as Json)
    .name as string;
  const stackFile = path.join(ws.project, `Pulumi.${ws.stack}.yaml`);
  const stack = (YAML.parse(fs.readFileSync(stackFile, "utf8")) ?? {}) as Json;
  const tag = topolvmImage().split(":").pop()!;
  stack.config = {
    ...stack.config,
    // The quickstart requires its disk list (no default): the guest's two disks it claims.
    [`${project}:diskSerials`]: SELECTED_SERIALS,
    [`${project}:agentImage`]: DEFAULT_IMAGE,
    [`${project}:agentImagePullPolicy`]: "Never",
    [`${project}:operatorArgs`]: OPERATOR_ARGS_UNDER_TCG,
    // One node: a standby operator on it would only add a process to its two emulated CPUs.
    [`${project}:operatorReplicas`]: 1,
    // The webhook's longest wait: under TCG its answer took over 10 s, and the deletion guard,
    // refused for the delay alone (failurePolicy Fail), would fail step 6b for the wrong reason.
    [`${project}:webhookTimeoutSeconds`]: 30,
    [`${project}:topolvmChartVersion`]: CHART_VERSION,
    [`${project}:topolvmChartPath`]: chartDir(),
    [`${project}:topolvmValues`]: {
      ...UNDER_TCG_VALUES,
      image: { repository: TOPOLVM_REPOSITORY, reference: tag, pullPolicy: "Never" },
    },
  };
  fs.writeFileSync(stackFile, YAML.stringify(stack));
  return ws;
}

/**
 * Sets one config value of the quickstart stack by editing its stack file (as `pulumi config set`);
 * a key with a namespace (`kubernetes:...`) is taken as it is, others are the project's.
 */
export function setStackConfig(ws: PulumiWorkspace, key: string, value: unknown): void {
  const project = (YAML.parse(fs.readFileSync(path.join(QUICKSTART_DIR, "Pulumi.yaml"), "utf8")) as Json)
    .name as string;
  const stackFile = path.join(ws.project, `Pulumi.${ws.stack}.yaml`);
  const stack = (YAML.parse(fs.readFileSync(stackFile, "utf8")) ?? {}) as Json;
  stack.config = { ...stack.config, [key.includes(":") ? key : `${project}:${key}`]: value };
  fs.writeFileSync(stackFile, YAML.stringify(stack));
}

/** A StatefulSet whose pod writes 16 MiB to its volume (a volumeClaimTemplate), prints the checksum, sleeps. */
export function webStatefulSet(namespace: string, storageClass = STORAGE_CLASS): Json {
  const script =
    "dd if=/dev/urandom of=/data/blob bs=1M count=16 2>/dev/null && sync && sha256sum /data/blob && sleep 36000";
  return {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "web", namespace },
    spec: {
      serviceName: "web",
      replicas: 1,
      selector: { matchLabels: { app: "web" } },
      template: {
        metadata: { labels: { app: "web" } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: "writer",
              image: TOOLS_IMAGE,
              imagePullPolicy: "Never",
              command: ["sh", "-c", script],
              volumeMounts: [{ name: "data", mountPath: "/data" }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data" },
          spec: {
            accessModes: ["ReadWriteOnce"],
            storageClassName: storageClass,
            resources: { requests: { storage: "1Gi" } },
          },
        },
      ],
    },
  };
}

/**
 * Where a credential of the kubeconfig (its client key or token) or any private key appears in plain
 * text: the stack's export, every file of the backend and of the project (the stack's config), and
 * everything pulumi printed. Empty when none.
 */
export function plainCredentials(ws: PulumiWorkspace, kubeconfigPath: string): string[] {
  const kubeconfig = fs.readFileSync(kubeconfigPath, "utf8");
  const credentials = [...kubeconfig.matchAll(/(?:client-key-data|token): *(\S+)/g)].map((m) => m[1]!);
  if (!credentials.length) throw new Error(`${kubeconfigPath} has no client key or token to look for`);
  const files = [
    { file: "pulumi stack export", text: ws.exportState().text },
    ...PulumiWorkspace.filesUnder(ws.backend),
    ...PulumiWorkspace.filesUnder(ws.project),
    { file: "pulumi's output", text: ws.transcript.join("\n") },
  ];
  return files.flatMap(({ file, text }) => [
    ...(/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(text) ? [`${file}: a private key`] : []),
    ...credentials.filter((c) => text.includes(c)).map(() => `${file}: a kubeconfig credential`),
  ]);
}

/** The sha256 of /data/blob on `claim`, read by a new pod on the node (ReadWriteOnce is per node). */
export async function blobChecksum(
  cluster: Cluster,
  namespace: string,
  claim: string,
  podName: string,
): Promise<string | undefined> {
  const read = "sha256sum /data/blob";
  const log = await runWithClaims(cluster, namespace, podName, { data: claim }, read, { timeoutMs: 900_000 });
  return checksumIn(log, "/data/blob");
}

export interface WrittenClaim {
  readonly pvc: Json;
  readonly pv: Json;
  /** The pod's log: the sha256 of what it wrote, and df of the volume. */
  readonly log: string;
}

/** A PVC on the thin class and a pod that writes 16 MiB to it and prints its checksum. */
export async function writeToNewClaim(
  cluster: Cluster,
  opts: { namespace?: string; name?: string; storageClass?: string } = {},
): Promise<WrittenClaim> {
  const ns = opts.namespace ?? "default";
  const name = opts.name ?? "demo-data";
  await apply(cluster.cp, claimObject(ns, name, opts.storageClass ?? STORAGE_CLASS, "1Gi"));
  const log = await runWithClaims(
    cluster,
    ns,
    `${name}-writer`,
    { data: name },
    "dd if=/dev/urandom of=/data/blob bs=1M count=16 2>/dev/null && sync && sha256sum /data/blob && df -h /data",
    { timeoutMs: 900_000, removeAfter: false },
  );
  const { pvc, pv } = await boundVolume(cluster, ns, name, 60_000);
  return { pvc, pv, log };
}

/** `pulumi <args>` in the stack (30 minutes at most); throws with its output and every pod's state. */
export async function runPulumi(ws: PulumiWorkspace, cluster: Cluster, args: string[]): Promise<string> {
  const r = await ws.runAsync(args, { timeoutMs: 1_800_000 });
  if (r.code !== 0)
    throw new Error(
      `pulumi ${args.join(" ")} exited ${r.code}:\n${r.output}\n----- pods -----\n${await podSummary(cluster)}`,
    );
  return r.output;
}

/**
 * Every pod with its phase, readiness and restarts, one a line: what a failure message needs; then,
 * for our own pods (agent, operator) that are not ready or have restarted, their events and the last
 * lines of each container's log (and of its previous run): why they are not serving.
 */
export async function podSummary(
  cluster: Cluster,
  also: (pod: Json) => boolean = () => false,
): Promise<string> {
  const pods = await podsIn(cluster.cp);
  const lines = pods.map(podLine);
  const detailed = pods.filter(
    (p) =>
      also(p) ||
      (p.metadata.namespace === NAMESPACE &&
        ((p.status?.containerStatuses ?? []) as Json[]).some((c) => !c.ready || c.restartCount > 0)),
  );
  for (const p of detailed) lines.push(...(await podDetails(cluster, p)));
  return lines.join("\n");
}

/** A pod's events and each container's last 40 log lines (and its previous run's, after a restart). */
async function podDetails(cluster: Cluster, pod: Json): Promise<string[]> {
  const { namespace, name } = pod.metadata as { namespace: string; name: string };
  const out = [`----- ${namespace}/${name}: events -----`, ...(await eventsOf(cluster.cp, namespace, name))];
  for (const c of (pod.status?.containerStatuses ?? []) as Json[])
    for (const previous of c.restartCount > 0 ? [false, true] : [false]) {
      const r = await cluster.cp.request(
        "GET",
        `/api/v1/namespaces/${namespace}/pods/${name}/log?container=${c.name}&tailLines=40${previous ? "&previous=true" : ""}`,
      );
      // An empty answer has no body: JSON.stringify(undefined) is undefined, not text.
      const text = typeof r.body === "string" ? r.body : (JSON.stringify(r.body) ?? "(no body)");
      out.push(
        `----- ${namespace}/${name} ${c.name}${previous ? " (previous run)" : ""}: log, HTTP ${r.status} -----`,
        text.trimEnd(),
      );
    }
  return out;
}
