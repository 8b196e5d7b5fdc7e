#!/usr/bin/env bash
# Installs what the test tiers need, idempotently (fast when everything is present):
#   - lvm2 and friends for the host tier (loop devices, lvm metadata),
#   - etcd + a kube-apiserver built from its Go module (test/env/install.sh),
#   - the Pulumi CLI and language hosts (test/pulumi/install.sh),
#   - qemu, a pinned Debian kernel and our initramfs for the real-kernel tier (test/vm/install.sh).
# Needs root (apt-get, loop devices). Fails loudly; it never skips a tier silently.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" != 0 ]; then
  echo "test/setup.sh: the test tiers need root (apt-get, losetup, lvm); run as root" >&2
  exit 1
fi
need=()
for tool in pvcreate:lvm2 wipefs:util-linux blkid:util-linux sfdisk:fdisk mkfs.ext4:e2fsprogs mkswap:util-linux openssl:openssl; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "test/setup.sh: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
fi

# A real etcd + kube-apiserver (+ controller-manager) built from their Go modules; cached by version.
bash test/env/install.sh

# The Pulumi CLI and its Node.js language host built from their Go modules, for the engine tier (test/pulumi).
bash test/pulumi/install.sh

# Not here yet: the Kubernetes provider plugin (test/pulumi/install-kubernetes.sh, ~35 min cold on
# two cores), for the journey tier (npm run test:kubernetes); see docs/testing-cluster.md, "CI budget".

# qemu, a pinned Debian kernel with device-mapper and our initramfs, for the real-kernel tier.
bash test/vm/install.sh

# podman, runc, skopeo and the pulumi-lvm image (npm run image, layers cached by their inputs), for test/image.
bash test/image/install.sh

# The real-cluster tier (test/cluster): kubelet and kube-scheduler (test/env/install.sh's wrapper
# module), containerd, TopoLVM and its CSI sidecars, the snapshot controller, helm, csi-sanity, the
# guest kernel's modules; after the qemu guest (it needs its kernel package), in the same Go build
# cache as everything above (cold: ~10 min on two cores, 2026-11-26).
bash test/cluster/install.sh
