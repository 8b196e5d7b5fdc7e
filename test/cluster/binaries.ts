/**
 * Where test/cluster/install.sh (and `test/env/install.sh kubelet kube-scheduler`) put the binaries
 * of the real-cluster tier, read from the pins in those scripts, so the tests and the build agree.
 * requireClusterBinaries() throws a loud error naming what is missing and the command to build it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { binDir as k8sBinDir } from "../env/cluster";
import { cacheDir, kernelVersion } from "../vm/guest";

const HERE = __dirname;
export const CLUSTER_INSTALL = path.join(HERE, "install.sh");

/** A pinned version from install.sh, e.g. pin("CONTAINERD_VERSION") === "v2.4.2". */
export function pin(name: string): string {
  const text = fs.readFileSync(CLUSTER_INSTALL, "utf8");
  const m = new RegExp(`^${name}=(\\S+)$`, "m").exec(text);
  if (!m?.[1]) throw new Error(`cannot find ${name}=... in ${CLUSTER_INSTALL}`);
  return m[1];
}

function toolBin(tool: string, versionPin: string): string {
  return path.join(cacheDir(), "cluster", tool, pin(versionPin), "bin");
}

export interface ClusterBinaries {
  readonly kubelet: string;
  readonly containerdBin: string;
  readonly hypertopolvm: string;
  readonly sidecars: Readonly<Record<string, string>>;
  readonly csiSanity: string;
  readonly helm: string;
  readonly pause: string;
  /** Root for `modprobe -d`: the pinned guest kernel's modules, unpacked with modules.dep. */
  readonly kernelModulesRoot: string;
  readonly kernelVersion: string;
}

export function clusterBinaries(): ClusterBinaries {
  const kver = kernelVersion();
  return {
    kubelet: path.join(k8sBinDir(), "kubelet"),
    containerdBin: toolBin("containerd", "CONTAINERD_VERSION"),
    hypertopolvm: path.join(toolBin("topolvm", "TOPOLVM_VERSION"), "hypertopolvm"),
    sidecars: {
      "csi-provisioner": path.join(toolBin("external-provisioner", "PROVISIONER_VERSION"), "csi-provisioner"),
      "csi-snapshotter": path.join(toolBin("external-snapshotter", "SNAPSHOTTER_VERSION"), "csi-snapshotter"),
      "snapshot-controller": path.join(
        toolBin("external-snapshotter", "SNAPSHOTTER_VERSION"),
        "snapshot-controller",
      ),
      "csi-resizer": path.join(toolBin("external-resizer", "RESIZER_VERSION"), "csi-resizer"),
      "csi-node-driver-registrar": path.join(
        toolBin("node-driver-registrar", "REGISTRAR_VERSION"),
        "csi-node-driver-registrar",
      ),
      livenessprobe: path.join(toolBin("livenessprobe", "LIVENESSPROBE_VERSION"), "livenessprobe"),
    },
    csiSanity: path.join(toolBin("csi-test", "CSI_TEST_VERSION"), "csi-sanity"),
    helm: path.join(toolBin("helm", "HELM_VERSION"), "helm"),
    pause: path.join(cacheDir(), "cluster", "pause", "bin", "pause"),
    kernelModulesRoot: path.join(cacheDir(), "cluster", "kmod", kver),
    kernelVersion: kver,
  };
}

/**
 * The files a part of the tier needs ("node": a Ready node; "topolvm": also TopoLVM, its sidecars
 * and helm; the csi-sanity test checks for its binary itself); throws one error naming each missing
 * one and how to build it.
 */
export function requireClusterBinaries(part: "node" | "topolvm" = "node"): ClusterBinaries {
  const b = clusterBinaries();
  const files = [
    b.kubelet,
    path.join(k8sBinDir(), "kube-scheduler"),
    ...["containerd", "containerd-shim-runc-v2", "ctr"].map((n) => path.join(b.containerdBin, n)),
    b.pause,
    path.join(b.kernelModulesRoot, "lib", "modules", b.kernelVersion, "modules.dep"),
    "/usr/sbin/runc",
    "/usr/lib/cni/bridge",
    ...(part === "topolvm" ? [b.hypertopolvm, ...Object.values(b.sidecars), b.helm] : []),
  ];
  const missing = files.filter((f) => !fs.existsSync(f));
  if (missing.length === 0) return b;
  throw new Error(
    [
      "",
      "==================================================================================",
      "The real-cluster test tier (test/cluster) is not installed:",
      ...missing.map((m) => `  missing: ${m}`),
      "  run:     bash test/setup.sh && bash test/cluster/install.sh   (npm run test:cluster runs the second)",
      "  (cold: ~25 min of Go builds on 2 cores; see docs/testing-cluster.md)",
      "==================================================================================",
    ].join("\n"),
  );
}
