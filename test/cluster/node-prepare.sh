#!/usr/bin/env bash
# Runs IN the test guest (root, inside its chroot of the host's root), once per boot, before
# containerd and the kubelet start: turns the plain test guest of test/vm into a Kubernetes node.
# Only the cluster tier (test/cluster/cluster.ts) runs it; the other guest suites boot the same
# initramfs and never see any of this. Why each step: docs/testing-cluster.md, "The node".
#
# Environment (all required):
#   KMOD_ROOT     root for `modprobe -d` with the pinned guest kernel's modules (test/cluster/install.sh)
#   KVER          the guest kernel version
#   MODULES       the extra modules, space separated
#   STATE_SERIAL  serial of the data disk for containerd's and the kubelet's state
#   STATE_MOUNT   where to mount it
#   SERVICE_IP    the `kubernetes` Service's ClusterIP
#   API_TARGET    <ip>:<port> of the apiserver as the guest reaches it
#   HOST_TOOLS    the tools the agent runs on the node (its runner's allow-list: lvm, vgs, pvcreate, lsblk, ...)
set -euo pipefail
: "${KMOD_ROOT:?}" "${KVER:?}" "${MODULES:?}" "${STATE_SERIAL:?}" "${STATE_MOUNT:?}" "${SERVICE_IP:?}" "${API_TARGET:?}" "${HOST_TOOLS:?}"

step() { echo "node-prepare: $*"; }

step "modules: $MODULES"
# shellcheck disable=SC2086 # a list of names
modprobe -d "$KMOD_ROOT" -S "$KVER" -a $MODULES

step "sysctls: ip_forward, bridge netfilter"
sysctl -q -w net.ipv4.ip_forward=1
sysctl -q -w net.bridge.bridge-nf-call-iptables=1

step "cgroup v2 with every controller delegated"
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup
for c in $(cat /sys/fs/cgroup/cgroup.controllers); do
  echo "+$c" >/sys/fs/cgroup/cgroup.subtree_control
done

step "state disk (serial $STATE_SERIAL) on $STATE_MOUNT"
dev=""
for s in /sys/block/*/serial; do
  [ "$(cat "$s" 2>/dev/null)" = "$STATE_SERIAL" ] && dev=$(basename "$(dirname "$s")")
done
[ -n "$dev" ] || { echo "node-prepare: no disk with serial $STATE_SERIAL" >&2; exit 1; }
if [ "${STATE_SEEDED:-0}" = 1 ]; then
  # A copy of a cached state disk (cluster.ts stateSeed): containerd's store with images unpacked,
  # copied while frozen; mount replays its journal.
  step "state disk seeded: keeping its filesystem"
else
  mkfs.ext4 -q -F -L pl-cluster "/dev/$dev"
fi
mkdir -p "$STATE_MOUNT"
mount "/dev/$dev" "$STATE_MOUNT"
mkdir -p "$STATE_MOUNT/kubelet" "$STATE_MOUNT/containerd" /var/lib/kubelet
mount --bind "$STATE_MOUNT/kubelet" /var/lib/kubelet
# Bidirectional mount propagation (CSI node plugins mount volumes for the kubelet) needs shared mounts.
mount --make-rshared /

step "the kubernetes Service ($SERVICE_IP:443) to the apiserver ($API_TARGET)"
# kube-proxy's job on a real node; this cluster has exactly one Service that pods use.
for chain in OUTPUT PREROUTING; do
  iptables -t nat -A "$chain" -d "$SERVICE_IP/32" -p tcp --dport 443 -j DNAT --to-destination "$API_TARGET"
done

step "the node's host tools in pid 1's root"
# Host-namespace tools (lvmd's `nsenter -m -t 1 /sbin/lvm`, the agent's `nsenter --target 1 ... vgs`,
# pvcreate, lsblk, wipefs, blkid, ...) enter pid 1's mount namespace, whose root is pid 1's. On a real
# node that is the node's root; in this guest pid 1 is the initramfs init and the node's root is its
# chroot /host, so the initramfs gets wrappers that run the node's tools in that chroot: /sbin/lvm
# (lvmd's absolute path) and /usr/local/sbin/<each of HOST_TOOLS> (first in the agent's PATH, before
# busybox's own blkid). The lvm commands keep their names (vgs -> /sbin/vgs, lvm's own symlink).
if [ /proc/1/root -ef / ]; then
  # pid 1's root is the node's root (the guest booted with pl.root=switch, as startCluster does):
  # nsenter -t 1 finds the node's own tools, as on a real node. Nothing to write.
  step "done (pid 1's root is the node's root)"
  exit 0
fi
mkdir -p /proc/1/root/usr/local/sbin
wrappers=(/sbin/lvm)
for name in $HOST_TOOLS; do wrappers+=("/usr/local/sbin/$name"); done
for tool in "${wrappers[@]}"; do
  name=$(basename "$tool")
  real=$(command -v "$name") || { echo "node-prepare: the node has no $name" >&2; exit 1; }
  printf '#!/bin/sh\n# Written by test/cluster/node-prepare.sh: the node'"'"'s %s in the node'"'"'s root (/host).\nexec chroot /host %s "$@"\n' \
    "$name" "$real" >"/proc/1/root$tool"
  chmod 0755 "/proc/1/root$tool"
done
step "done"
