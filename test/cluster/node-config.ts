/**
 * The guest node's configuration files (pure: strings from inputs), written into the guest by
 * startCluster(). Why each setting: docs/testing-cluster.md, "The node".
 */

/** Where the node's files live in the guest. */
export const NODE_PATHS = {
  containerdConfig: "/etc/containerd/config.toml",
  containerdSocket: "/run/containerd/containerd.sock",
  cniConfDir: "/etc/cni/net.d",
  cniBinDir: "/usr/lib/cni",
  kubeletConfig: "/etc/kubernetes/kubelet.yaml",
  kubeletKubeconfig: "/etc/kubernetes/kubelet.kubeconfig",
  clusterCa: "/etc/kubernetes/ca.crt",
  /** ext4 on the data disk: overlayfs snapshots cannot live on 9p or on an overlay. */
  stateMount: "/var/lib/pl-cluster",
} as const;

/** The guest's address and its gateway (the host) under qemu user networking. */
export const GUEST_IP = "10.0.2.15";
export const HOST_FROM_GUEST = "10.0.2.2";
export const POD_CIDR = "10.244.0.0/24";
/** The `kubernetes` Service's ClusterIP (first address of the apiserver's service range). */
export const KUBERNETES_SERVICE_IP = "10.0.0.1";

export function containerdConfig(opts: { sandboxImage: string; runc: string }): string {
  return `# Written by test/cluster (startCluster): containerd ${"v2"} config, version 3.
version = 3
root = "${NODE_PATHS.stateMount}/containerd"
state = "/run/containerd"

[grpc]
  address = "${NODE_PATHS.containerdSocket}"

[plugins."io.containerd.cri.v1.images"]
  snapshotter = "overlayfs"
  # Images are imported locally (ctr images import); there is no registry to pull from.
  [plugins."io.containerd.cri.v1.images".pinned_images]
    sandbox = "${opts.sandboxImage}"

[plugins."io.containerd.cri.v1.runtime"]
  enable_selinux = false
  # The guest kernel has AppArmor but the node has no apparmor_parser.
  disable_apparmor = true
  [plugins."io.containerd.cri.v1.runtime".containerd]
    default_runtime_name = "runc"
    [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.cri.v1.runtime".containerd.runtimes.runc.options]
        BinaryName = "${opts.runc}"
        # No systemd in the guest: cgroupfs, as in the kubelet.
        SystemdCgroup = false
  [plugins."io.containerd.cri.v1.runtime".cni]
    bin_dirs = ["${NODE_PATHS.cniBinDir}"]
    conf_dir = "${NODE_PATHS.cniConfDir}"
`;
}

/**
 * A bridge network with host-local IPAM. ipMasq: without it pod traffic to the host (10.0.2.2)
 * fails, because qemu's user networking only forwards traffic from the guest's own 10.0.2.15.
 */
export function cniConfig(): string {
  return `${JSON.stringify(
    {
      cniVersion: "1.0.0",
      name: "pl-cluster",
      plugins: [
        {
          type: "bridge",
          bridge: "cni0",
          isGateway: true,
          ipMasq: true,
          hairpinMode: true,
          ipam: { type: "host-local", ranges: [[{ subnet: POD_CIDR }]], routes: [{ dst: "0.0.0.0/0" }] },
        },
      ],
    },
    null,
    2,
  )}\n`;
}

export function kubeletConfig(): string {
  return `# Written by test/cluster (startCluster).
apiVersion: kubelet.config.k8s.io/v1beta1
kind: KubeletConfiguration
containerRuntimeEndpoint: unix://${NODE_PATHS.containerdSocket}
cgroupDriver: cgroupfs
authentication:
  anonymous:
    enabled: false
  webhook:
    enabled: true
  x509:
    clientCAFile: ${NODE_PATHS.clusterCa}
authorization:
  mode: Webhook
failSwapOn: false
podCIDR: ${POD_CIDR}
resolvConf: /etc/resolv.conf
serializeImagePulls: false
# nodeStatusUpdateFrequency and nodeStatusReportFrequency: the kubelet's defaults (status computed every
# 10 s, posted on a change or every 5 min; its Lease is the heartbeat). 5 s, set here before, posted
# the whole Node (its image list included) every 5 s, and every Node watcher on the emulated node's
# two CPUs (topolvm-node, the operators) decoded each post.
# A test node with small disks: evict only when really out of space.
evictionHard:
  memory.available: 50Mi
  nodefs.available: 1%
  nodefs.inodesFree: 1%
  imagefs.available: 1%
imageGCHighThresholdPercent: 100
imageGCLowThresholdPercent: 99
`;
}

/**
 * The kubelet's kubeconfig: the apiserver through qemu's gateway, with the name its serving
 * certificate has (its SANs lack 10.0.2.2), and a client certificate of the node's identity.
 */
export function kubeletKubeconfig(opts: {
  apiPort: number;
  caPem: string;
  certPem: string;
  keyPem: string;
}): string {
  const b64 = (s: string) => Buffer.from(s).toString("base64");
  return `apiVersion: v1
kind: Config
clusters:
- name: test
  cluster:
    server: https://${HOST_FROM_GUEST}:${opts.apiPort}
    tls-server-name: localhost
    certificate-authority-data: ${b64(opts.caPem)}
users:
- name: kubelet
  user:
    client-certificate-data: ${b64(opts.certPem)}
    client-key-data: ${b64(opts.keyPem)}
contexts:
- name: test
  context:
    cluster: test
    user: kubelet
current-context: test
`;
}

/** Kernel modules beyond the guest's own (test/vm/modules.txt): pod networking and NAT. */
export const CLUSTER_MODULES = [
  "bridge",
  "br_netfilter",
  "veth",
  "nf_conntrack",
  "nf_nat",
  "nf_tables",
  "nft_compat",
  "nft_chain_nat",
  "xt_MASQUERADE",
  "xt_conntrack",
  "xt_comment",
  "xt_mark",
  "xt_addrtype",
  "xt_nat",
  "ip_tables",
  "iptable_filter",
  "iptable_nat",
] as const;
