/**
 * csi-sanity (csi-test v5.6.0) in the guest against the deployed TopoLVM: topolvm-node's socket
 * (the kubelet's plugin directory) and topolvm-controller's (its pod's socket emptyDir). Target and
 * staging paths are under the kubelet's CSI plugin directory, which topolvm-node's container mounts.
 * topolvm.test.ts runs the focused subset in every CI run: the controller's and node's answers to
 * creation, deletion, capacity and node info, not the "should work" lifecycles (stage, publish,
 * expand, unpublish, unstage), which the tier's PVCs go through for real by the kubelet on the same
 * driver and classes. PULUMI_LVM_CSI_SANITY=full runs everything (52 specs in 416 s under TCG on the
 * deployed driver, 2026-11-26), PULUMI_LVM_CSI_SANITY_FOCUS overrides the focus.
 */
import type { Cluster } from "./cluster";
import type { Json } from "../env/cluster";
import { podLine, podsIn, waitFor } from "./objects";

const SANITY_DIR = "/var/lib/kubelet/plugins/kubernetes.io/csi/csi-sanity";

/** The ginkgo focus of this run ("" = the full suite), from the environment. */
export const SANITY_FOCUS =
  process.env.PULUMI_LVM_CSI_SANITY === "full"
    ? ""
    : (process.env.PULUMI_LVM_CSI_SANITY_FOCUS ?? "CreateVolume|DeleteVolume|NodeGetInfo|GetCapacity");

export interface SanityOptions {
  /** TopoLVM's namespace. */
  readonly namespace: string;
  /** The TopoLVM device class its volumes are created in. */
  readonly deviceClass: string;
  readonly volumeBytes: number;
  readonly expandBytes: number;
  /** @default SANITY_FOCUS */
  readonly focus?: string;
}

export interface SanityResult {
  /** csi-sanity's exit code (null: killed by a signal). */
  readonly code: number | null;
  /** ginkgo's "Ran N of M Specs ..." and its verdict line (or the output's tail). */
  readonly summary: string;
  readonly ms: number;
  /** The first failed spec's report and stderr's tail, when it failed. */
  readonly failure?: string;
}

/** TopoLVM's pods in `namespace`, a line each with their containers' restarts, for a failure's report. */
async function restartsIn(cluster: Cluster, namespace: string): Promise<string> {
  return (await podsIn(cluster.cp, namespace)).map(podLine).join("\n");
}

/**
 * The running topolvm-controller pod's CSI socket, found under that pod's own directory (by its uid).
 * Not by searching every pod's emptyDir: a replaced controller pod's directory (and its dead socket)
 * stays until the kubelet cleans it up, and a link to it fails every controller call.
 */
async function controllerSocket(cluster: Cluster, namespace: string): Promise<string> {
  const live = (await podsIn(cluster.cp, namespace)).filter(
    (p) =>
      p.metadata.name.startsWith("topolvm-controller-") &&
      !p.metadata.deletionTimestamp &&
      p.status?.phase === "Running" &&
      ((p.status.containerStatuses ?? []) as Json[]).every((s) => s.ready),
  );
  if (live.length !== 1) return "";
  const found = await cluster.guest.run([
    "find",
    `/var/lib/kubelet/pods/${live[0].metadata.uid}/volumes`,
    "-name",
    "csi-topolvm.sock",
    "-type",
    "s",
  ]);
  return found.trim().split("\n")[0] ?? "";
}

/** Runs csi-sanity in the guest; the caller waits for TopoLVM's pods to be ready first. */
export async function runCsiSanity(cluster: Cluster, o: SanityOptions): Promise<SanityResult> {
  const g = cluster.guest;
  const focus = o.focus ?? SANITY_FOCUS;
  // topolvm-node's socket is a hostPath: one fixed path.
  const nodeSock = "/var/lib/kubelet/plugins/topolvm.io/node/csi-topolvm.sock";
  // A starved plugin may be in a probe restart: wait until both sockets exist; an empty path
  // (stop 24's CI run) would make the links below dangle.
  const { controllerSock } = await waitFor(
    "topolvm-node's and the running topolvm-controller pod's CSI sockets",
    async () => ({
      node: (await g.exec(["test", "-S", nodeSock])).code === 0,
      controllerSock: await controllerSocket(cluster, o.namespace),
    }),
    (v) => v.node && v.controllerSock.endsWith("/csi-topolvm.sock"),
    300_000,
    async () => `${await restartsIn(cluster, o.namespace)}\n${await cluster.nodeLogs(30)}`,
  );
  // A unix socket's path is at most 107 bytes (sun_path); the controller's, in its pod's emptyDir
  // (/var/lib/kubelet/pods/<uid>/volumes/kubernetes.io~empty-dir/socket-dir/csi-topolvm.sock), is
  // 118, and every dial of it failed with EINVAL until each spec ran into its timeout (0 of 25 in
  // 1,503 s). connect(2) follows symlinks, so short links reach both sockets — as the kubelet's
  // own sockets are reached through short paths.
  await g.run([
    "sh",
    "-c",
    // csi-sanity makes the target and staging directories with mkdir, not mkdir -p: the parent first.
    // Both under the CSI plugin directory, which topolvm-node's container mounts: not under
    // /var/lib/kubelet/pods, where the kubelet removes a directory that is no pod's as an orphan.
    `mkdir -p /run/pl-sanity ${SANITY_DIR}` +
      ` && ln -sfn '${nodeSock}' /run/pl-sanity/node.sock && ln -sfn '${controllerSock}' /run/pl-sanity/controller.sock` +
      ` && printf "topolvm.io/device-class: ${o.deviceClass}\\n" >/var/lib/pl-cluster/sanity-params.yaml`,
  ]);
  const restartsBefore = await restartsIn(cluster, o.namespace);
  const t0 = Date.now();
  const r = await g.exec(
    [
      cluster.binaries.csiSanity,
      "--csi.endpoint=unix:///run/pl-sanity/node.sock",
      "--csi.controllerendpoint=unix:///run/pl-sanity/controller.sock",
      `--csi.mountdir=${SANITY_DIR}/target`,
      `--csi.stagingdir=${SANITY_DIR}/staging`,
      "--csi.testvolumeparameters=/var/lib/pl-cluster/sanity-params.yaml",
      `--csi.testvolumesize=${o.volumeBytes}`,
      `--csi.testvolumeexpandsize=${o.expandBytes}`,
      "--ginkgo.no-color",
      ...(focus ? [`--ginkgo.focus=${focus}`] : []),
    ],
    { timeoutMs: 1_800_000 },
  );
  const ms = Date.now() - t0;
  const summary = /Ran \d+ of \d+ Specs[^\n]*\n[^\n]*/.exec(r.stdout)?.[0] ?? r.stdout.slice(-3000);
  if (r.code === 0) return { code: 0, summary, ms };
  // The first failed spec's own report (ginkgo's "[FAILED]" block): what the summary cannot say.
  const at = r.stdout.search(/\[FAIL(ED)?\]/);
  // What a truncated report must still show comes first: the pods' restarts, then the failed spec.
  const failure =
    `controller socket: ${controllerSock}\nTopoLVM's pods (container=restarts) before the run:\n${restartsBefore}\n` +
    `after it:\n${await restartsIn(cluster, o.namespace).catch((e: Error) => e.message)}\n` +
    `first failure:\n${r.stdout.slice(Math.max(0, at - 300), at + 2500)}\nstderr:\n${r.stderr.slice(-1500)}`;
  return { code: r.code, summary, ms, failure };
}
