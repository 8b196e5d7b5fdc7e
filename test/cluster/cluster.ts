/**
 * A real single-node Kubernetes cluster for tests: the control plane of test/env (etcd,
 * kube-apiserver, kube-controller-manager, kube-scheduler) on the host, and one node — the qemu
 * guest of test/vm, with N test disks — running containerd and a real kubelet built from source.
 *
 *   const cluster = await startCluster({ disks: [{ sizeBytes: 4 * GiB, serial: "SN-A" }], images });
 *   afterAll(() => cluster?.stop());                 // ALWAYS; also stops everything on failure
 *   await cluster.cp.request("POST", "/api/v1/namespaces/default/pods", pod);
 *   await cluster.podLogs("default", "p");            // through the apiserver, like kubectl logs
 *   await cluster.exec("default", "p", ["id", "-u"]);  // { stdout, stderr, exitCode }, like kubectl exec
 *
 * Nothing is skipped: a missing binary, kernel or image throws an error naming the command that
 * builds it (requireClusterBinaries, requireVmArtifacts). See docs/testing-cluster.md.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { ALLOWED_TOOLS } from "../../src/agent/lvm-runner";
import { ControlPlane, signClientCert, startControlPlane } from "../env/cluster";
import { cacheDir, DiskSpec, Guest, guestStoppedAnswering, REPO_ROOT, startGuest } from "../vm/guest";
import { writeGuestFile } from "../vm/guest-agent";
import { ClusterBinaries, requireClusterBinaries } from "./binaries";
import { bootOnceMoreIfGuestHung } from "./boot-retry";
import { sampleNode } from "./node-sampler";
import { hashFileStats } from "./images";
import { KubeletProxy, POD_RELAY, startKubeletProxy } from "./kubelet-proxy";
import { ExecOptions, ExecResult, execApiOf, podExec } from "./pod-exec";
import {
  CLUSTER_MODULES,
  cniConfig,
  containerdConfig,
  GUEST_IP,
  HOST_FROM_GUEST,
  KUBERNETES_SERVICE_IP,
  kubeletConfig,
  kubeletKubeconfig,
  NODE_PATHS,
  POD_CIDR,
} from "./node-config";

const GiB = 1024 ** 3;
const STATE_SERIAL = "pl-cluster-state";
const KUBELET_PORT = 10250;
/** The guest port of the node's pod relay (pod-relay.mjs): the apiserver's way to pod IPs. */
const POD_RELAY_PORT = 10998;
/** kube-controller-manager controllers a node with CSI volumes needs. */
const CONTROLLERS = [
  "garbagecollector",
  "namespace",
  "serviceaccount",
  "serviceaccount-token",
  "root-ca-cert-publisher",
  "deployment",
  "replicaset",
  "daemonset",
  "statefulset",
  "job",
  "persistentvolume-binder",
  "persistentvolume-expander",
  "pv-protection",
  "pvc-protection",
  "attachdetach",
  "ephemeral-volume",
  "endpointslice",
  // v1 Endpoints, which a real cluster still keeps (the default controller set): Pulumi's Kubernetes
  // provider awaits a Service's Endpoints, not its EndpointSlices (pulumi-kubernetes 4.32.0
  // provider/pkg/await/service.go); without them every Service's create waits its 10 minutes out.
  "endpoint",
  // Removes the node.kubernetes.io/not-ready taint the kubelet registers with, once the node is Ready.
  "nodelifecycle",
];

export interface ClusterOptions {
  /** The node's test disks (an extra data disk for containerd and the kubelet is added last). */
  readonly disks: readonly DiskSpec[];
  /** The node name (the guest's hostname). @default "pl-node" */
  readonly nodeName?: string;
  /** OCI archives imported into the node's containerd before the kubelet starts. @default [] */
  readonly images?: readonly string[];
  /**
   * Archives that rarely change (TopoLVM, the sidecars, pause): imported once into a state disk that
   * is cached by their names, sizes and mtimes and copied for each later boot, instead of imported
   * on every boot (an import is decompression under TCG: minutes for TopoLVM's 94 MB).
   * @default []
   */
  readonly seededImages?: readonly string[];
  /** The sandbox image's name; its archive must be among `images`. */
  readonly sandboxImage: string;
  /** Guest memory. @default 3072 */
  readonly memoryMiB?: number;
  /** More guest ports to forward (see Guest.hostPort), e.g. an agent's. @default [] */
  readonly forwardPorts?: readonly number[];
  /** Node labels. @default {} */
  readonly nodeLabels?: Readonly<Record<string, string>>;
  /** Give up waiting for Node Ready after this long. @default 300000 */
  readonly readyTimeoutMs?: number;
}

export interface Cluster {
  readonly cp: ControlPlane;
  readonly guest: Guest;
  readonly nodeName: string;
  readonly binaries: ClusterBinaries;
  /** Milliseconds: control plane up, guest booted, node prepared, images imported, Node Ready (from start). */
  readonly timings: Readonly<Record<string, number>>;
  /** A container's log through the apiserver (GET pods/log → kubelet), like `kubectl logs`. */
  podLogs(namespace: string, pod: string, container?: string): Promise<string>;
  /**
   * A command in a pod's container through the apiserver (WebSocket exec → kubelet → runc), like
   * `kubectl exec`; a non-zero exit is the result's exitCode, not an error (pod-exec.ts).
   */
  exec(namespace: string, pod: string, argv: readonly string[], o?: ExecOptions): Promise<ExecResult>;
  /** The last lines of containerd's and the kubelet's logs in the guest, for failure messages. */
  nodeLogs(lines?: number): Promise<string>;
  /** Stops the guest, the control plane and the proxy; idempotent; never throws. */
  stop(): Promise<void>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const STATE_BYTES = 16 * GiB;
/** Bump when node-prepare.sh changes what it lays out on the state disk. */
const STATE_FORMAT = 1;
/** Seeds kept in the cache (the newest): one per set of seeded images, each ~0.2–0.6 GB on disk. */
const SEEDS_KEPT = 2;

/** The cached state disk for these seeded images and this containerd. */
function stateSeed(bins: ClusterBinaries, images: readonly string[]): string {
  const h = hashFileStats(createHash("sha256").update(`format ${STATE_FORMAT}\0${STATE_BYTES}\n`), [
    path.join(bins.containerdBin, "containerd"),
    ...images,
  ]);
  return path.join(cacheDir(), "cluster", "state-seeds", `${h.digest("hex").slice(0, 16)}.img`);
}

/**
 * Copies the guest's state disk (containerd's store with the seeded images unpacked, nothing of the
 * kubelet yet) to `seed`, with the filesystem frozen so the copy is consistent; keeps the newest
 * SEEDS_KEPT seeds.
 */
async function saveStateSeed(guest: Guest, seed: string): Promise<void> {
  const disk = guest.disks.find((d) => d.serial === STATE_SERIAL);
  if (!disk) throw new Error(`no state disk (serial ${STATE_SERIAL}) attached to the guest`);
  fs.mkdirSync(path.dirname(seed), { recursive: true });
  const tmp = `${seed}.${process.pid}.tmp`;
  await guest.run(["sh", "-c", `sync && fsfreeze -f ${NODE_PATHS.stateMount}`]);
  try {
    // qemu writes the raw image through the host's page cache (cache=unsafe): once the guest's
    // filesystem is frozen, every block it wrote is visible in the host file.
    execFileSync("cp", ["--sparse=always", disk.image, tmp]);
  } finally {
    await guest.run(["fsfreeze", "-u", NODE_PATHS.stateMount]);
  }
  fs.renameSync(tmp, seed);
  const dir = path.dirname(seed);
  const old = fs
    .readdirSync(dir)
    .filter((f) => f.endsWith(".img"))
    .map((f) => ({ f: path.join(dir, f), t: fs.statSync(path.join(dir, f)).mtimeMs }))
    .sort((a, b) => b.t - a.t)
    .slice(SEEDS_KEPT);
  for (const { f } of old) fs.rmSync(f, { force: true });
}

/** Waits until the node's pod relay answers through its forward (405 to a GET: it only CONNECTs). */
async function waitForRelay(guest: Guest, hostPort: number, log: string): Promise<void> {
  const deadline = Date.now() + 120_000;
  for (;;) {
    const status = await fetch(`http://127.0.0.1:${hostPort}/`, { signal: AbortSignal.timeout(5000) })
      .then((r) => r.status)
      .catch(() => 0);
    if (status === 405) return;
    if (Date.now() > deadline) {
      const tail = await guest.exec(["tail", "-n", "20", log]).catch((e: Error) => ({ stdout: e.message }));
      throw new Error(
        `the pod relay (${POD_RELAY}) did not answer in 120 s (last: ${status})\n${tail.stdout}`,
      );
    }
    await sleep(1000);
  }
}

/**
 * A control plane and one node, Ready, from `opts`. When the guest stops answering while the node
 * comes up, everything is torn down and booted once more (bootOnceMoreIfGuestHung, tested in
 * boot-retry.test.ts with stand-in boots: a TCG soft lockup cannot be caused on demand here); any
 * other failure, or a second hang, fails the caller as it is.
 */
export function startCluster(opts: ClusterOptions): Promise<Cluster> {
  return bootOnceMoreIfGuestHung(() => bootCluster(opts));
}

async function bootCluster(opts: ClusterOptions): Promise<Cluster> {
  const t0 = Date.now();
  const timings: Record<string, number> = {};
  const mark = (name: string) => (timings[name] = Date.now() - t0);
  const bins = requireClusterBinaries();
  const nodeName = opts.nodeName ?? "pl-node";
  for (const image of [...(opts.seededImages ?? []), ...(opts.images ?? [])]) {
    if (!fs.existsSync(image)) throw new Error(`startCluster: image archive ${image} does not exist`);
  }
  const seed = stateSeed(bins, opts.seededImages ?? []);
  const seeded = fs.existsSync(seed);

  let proxy: KubeletProxy | undefined;
  let cp: ControlPlane | undefined;
  let guest: Guest | undefined;
  let stopped = false;
  let stopSampling = () => undefined as void;
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    stopSampling();
    for (const step of [() => guest?.stop(), () => cp?.stop(), () => proxy?.close()]) {
      try {
        await step();
      } catch {
        /* keep tearing down */
      }
    }
  };

  const kubeletLog = "/var/log/pl-cluster/kubelet.log";
  const containerdLog = "/var/log/pl-cluster/containerd.log";
  const nodeLogs = async (lines = 40): Promise<string> => {
    if (!guest) return "(no guest)";
    const parts: string[] = [];
    for (const f of [containerdLog, kubeletLog]) {
      const r = await guest
        .exec(["tail", "-n", String(lines), f])
        .catch((e: Error) => ({ stdout: e.message }));
      parts.push(`----- ${f} (in the guest) -----\n${r.stdout}`);
    }
    return parts.join("\n");
  };

  try {
    proxy = await startKubeletProxy();
    cp = await startControlPlane({
      controllerManager: true,
      controllers: CONTROLLERS,
      scheduler: true,
      kubeletClientCert: true,
      apiserverFlags: [
        // The agent and lvmd run privileged, as LvmSystem and TopoLVM's chart configure them.
        "--allow-privileged=true",
        // Webhooks and aggregated APIs dialled at their endpoint's pod IP:port, not the ClusterIP
        // (nothing routes Service IPs here: no kube-proxy); the pod relay reaches pod IPs.
        "--enable-aggregator-routing=true",
        // Every apiserver → kubelet and → pod connection (logs, exec, webhooks) through the proxy.
        `--egress-selector-config-file=${proxy.egressConfigFile}`,
      ],
    });
    mark("controlPlane");
    const apiPort = Number(new URL(cp.url).port);
    const certName = `node-${nodeName}`;
    signClientCert(cp.dataDir, certName, `system:node:${nodeName}`, ["system:nodes"]);

    guest = await startGuest({
      disks: [
        ...opts.disks,
        { sizeBytes: STATE_BYTES, serial: STATE_SERIAL, bus: "virtio", ...(seeded ? { seed } : {}) },
      ],
      hostname: nodeName,
      memoryMiB: opts.memoryMiB ?? 3072,
      forwardPorts: [KUBELET_PORT, POD_RELAY_PORT, ...(opts.forwardPorts ?? [])],
      // pid 1's mount namespace rooted at the node's root, as on a node: exec probes (lvmd's) and
      // nsenter -t 1 (the agent's, lvmd's) need it (test/vm/guest-init.sh, pl.root=switch).
      nodeRoot: "switch",
    });
    mark("guestBooted");
    stopSampling = sampleNode(guest);
    for (const address of [GUEST_IP, nodeName])
      proxy.route(address, KUBELET_PORT, guest.hostPort(KUBELET_PORT));

    await guest.run(["bash", path.join(REPO_ROOT, "test", "cluster", "node-prepare.sh")], {
      timeoutMs: 180_000,
      env: {
        KMOD_ROOT: bins.kernelModulesRoot,
        KVER: bins.kernelVersion,
        MODULES: CLUSTER_MODULES.join(" "),
        STATE_SERIAL,
        STATE_MOUNT: NODE_PATHS.stateMount,
        STATE_SEEDED: seeded ? "1" : "0",
        SERVICE_IP: KUBERNETES_SERVICE_IP,
        API_TARGET: `${HOST_FROM_GUEST}:${apiPort}`,
        // Every tool the agent may run (its runner's allow-list), as the node's own tools.
        HOST_TOOLS: ALLOWED_TOOLS.join(" "),
      },
    });
    const read = (f: string) => fs.readFileSync(path.join(cp!.dataDir, f), "utf8");
    await writeGuestFile(guest, NODE_PATHS.clusterCa, cp.caPem, "644");
    await writeGuestFile(
      guest,
      NODE_PATHS.kubeletKubeconfig,
      kubeletKubeconfig({
        apiPort,
        caPem: cp.caPem,
        certPem: read(`${certName}.crt`),
        keyPem: read(`${certName}.key`),
      }),
      "600",
    );
    await writeGuestFile(guest, NODE_PATHS.kubeletConfig, kubeletConfig(), "644");
    await writeGuestFile(
      guest,
      path.join(NODE_PATHS.cniConfDir, "10-pl-cluster.conflist"),
      cniConfig(),
      "644",
    );
    await writeGuestFile(
      guest,
      NODE_PATHS.containerdConfig,
      containerdConfig({ sandboxImage: opts.sandboxImage, runc: "/usr/sbin/runc" }),
      "644",
    );
    mark("nodePrepared");

    // The apiserver's way to pod IPs (webhooks, pods/proxy), as a real cluster's network gives it:
    // a CONNECT relay on the node that dials only inside the pod CIDR. Started now, waited for below.
    const relayLog = "/var/log/pl-cluster/pod-relay.log";
    await guest.run(["mkdir", "-p", path.dirname(relayLog)]);
    await guest.spawn(["node", POD_RELAY, `0.0.0.0:${POD_RELAY_PORT}`, POD_CIDR], { logFile: relayLog });

    const PATH = `${bins.containerdBin}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin`;
    await guest.run(["mkdir", "-p", path.dirname(kubeletLog)]);
    await guest.spawn(
      [path.join(bins.containerdBin, "containerd"), "--config", NODE_PATHS.containerdConfig],
      {
        env: { PATH },
        logFile: containerdLog,
      },
    );
    const ctr = [
      path.join(bins.containerdBin, "ctr"),
      "--address",
      NODE_PATHS.containerdSocket,
      "-n",
      "k8s.io",
    ];
    for (let i = 0; ; i++) {
      const r = await guest.exec([...ctr, "version"], { timeoutMs: 20_000 });
      if (r.code === 0) break;
      if (i > 120) throw new Error(`containerd did not answer in 60 s: ${r.stderr}\n${await nodeLogs()}`);
      await sleep(500);
    }
    mark("containerdUp");
    if (!seeded && opts.seededImages?.length) {
      for (const image of opts.seededImages) {
        await guest.run([...ctr, "images", "import", image], { timeoutMs: 900_000 });
        mark(`imported ${path.basename(image)}`);
      }
      await saveStateSeed(guest, seed);
      mark("state disk seeded");
    }
    for (const image of opts.images ?? []) {
      // Unpacking is decompression under TCG: the product image (57 MB) took over 300 s at load 28.
      await guest.run([...ctr, "images", "import", image], { timeoutMs: 900_000 });
      mark(`imported ${path.basename(image)}`);
    }
    mark("imagesImported");

    const labels = Object.entries(opts.nodeLabels ?? {}).map(([k, v]) => `${k}=${v}`);
    await guest.spawn(
      [
        bins.kubelet,
        `--config=${NODE_PATHS.kubeletConfig}`,
        `--kubeconfig=${NODE_PATHS.kubeletKubeconfig}`,
        `--hostname-override=${nodeName}`,
        `--node-ip=${GUEST_IP}`,
        ...(labels.length ? [`--node-labels=${labels.join(",")}`] : []),
        "--v=1",
      ],
      { env: { PATH }, logFile: kubeletLog },
    );
    const deadline = Date.now() + (opts.readyTimeoutMs ?? 300_000);
    for (;;) {
      const r = await cp.request("GET", `/api/v1/nodes/${nodeName}`);
      const ready =
        r.status === 200 && r.body.status?.conditions?.find((c: { type: string }) => c.type === "Ready");
      const notReadyTaint = (r.body?.spec?.taints ?? []).some(
        (t: { key: string }) => t.key === "node.kubernetes.io/not-ready",
      );
      if (ready?.status === "True" && !notReadyTaint) break;
      const dead = (await guest.processes()).find((p) => p.exitCode !== null || p.signal !== null);
      if (dead)
        throw new Error(`${dead.argv[0]} exited (${dead.exitCode ?? dead.signal})\n${await nodeLogs()}`);
      if (Date.now() > deadline) {
        throw new Error(
          `node ${nodeName} not Ready in time (${JSON.stringify(ready ?? r.status)})\n${await nodeLogs()}`,
        );
      }
      await sleep(1000);
    }
    mark("nodeReady");
    await waitForRelay(guest, guest.hostPort(POD_RELAY_PORT), relayLog);
    proxy.relayPods(guest.hostPort(POD_RELAY_PORT));
    mark("podRelay");
  } catch (e) {
    // A guest that stopped answering would only time out twice more (90 s each) for its logs.
    const logs = guest && !guestStoppedAnswering(e) ? await nodeLogs().catch(() => "") : "";
    await stop();
    if (logs && !(e as Error).message.includes("(in the guest)")) (e as Error).message += `\n${logs}`;
    throw e;
  }

  const c = cp!;
  return {
    cp: c,
    guest: guest!,
    nodeName,
    binaries: bins,
    timings,
    async podLogs(namespace, pod, container) {
      const q = container ? `?container=${encodeURIComponent(container)}` : "";
      const r = await c.request("GET", `/api/v1/namespaces/${namespace}/pods/${pod}/log${q}`);
      if (r.status !== 200)
        throw new Error(`logs of ${namespace}/${pod}: HTTP ${r.status}: ${JSON.stringify(r.body)}`);
      return typeof r.body === "string" ? r.body : JSON.stringify(r.body);
    },
    exec: (namespace, pod, argv, o) => podExec(execApiOf(c), namespace, pod, argv, o),
    nodeLogs,
    stop,
  };
}
