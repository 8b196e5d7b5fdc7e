#!/usr/bin/env bash
# What only the later tiers of `npm test` need, built after test/setup.sh and while the host lane's
# tests run (test/run.sh starts it in the background), in this order, each in the same Go build
# cache and module graph as test/setup.sh's builds (test/env/go-build.sh):
#   1. pulumi-resource-command (test/pulumi/install-command.sh): the bare-hosts tier (the smallest
#      build, 88 s cold on top of test/setup.sh's);
#   2. the real cluster's binaries (test/cluster/install.sh): kubelet, kube-scheduler, containerd,
#      TopoLVM and its CSI sidecars, the snapshot controller, helm, csi-sanity, the guest's modules;
#   3. pulumi-resource-kubernetes (test/pulumi/install-kubernetes.sh): the user's journey and the
#      Kubernetes provider's tier.
# When PULUMI_LVM_SETUP_LATE_MARKS names a directory, each step that finished touches
# <dir>/{command,cluster,kubernetes}.ready there; a failing step stops the script (exit 1, the
# failing script says why), so what depends on it never starts. Each step returns at once when its
# binaries are cached. Run alone it is `bash test/setup-late.sh` after `bash test/setup.sh`.
set -euo pipefail
cd "$(dirname "$0")/.."
marks="${PULUMI_LVM_SETUP_LATE_MARKS:-}"
t0=$(date +%s)
step() {
  local what=$1 script=$2
  echo "setup-late.sh: [$(($(date +%s) - t0)) s] $what: bash $script (load $(cut -d' ' -f1-3 /proc/loadavg))"
  bash "$script"
  echo "setup-late.sh: [$(($(date +%s) - t0)) s] $what ready"
  if [ -n "$marks" ]; then touch "$marks/$what.ready"; fi
}
step command test/pulumi/install-command.sh
step cluster test/cluster/install.sh
step kubernetes test/pulumi/install-kubernetes.sh
echo "setup-late.sh: done in $(($(date +%s) - t0)) s"
