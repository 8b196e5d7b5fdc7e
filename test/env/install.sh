#!/usr/bin/env bash
# Installs the real Kubernetes control-plane binaries that the integration tests run
# (test/env/cluster.ts), built from source through the Go module proxy by the wrapper
# module in test/env/k8s: the one module graph all Go-built test tools share (test/env/go-build.sh
# `tools_module`), so the libraries the control plane shares with the cluster tier's tools and the
# provider plugins are compiled once. Idempotent: binaries that already exist are not rebuilt.
#
#   bash test/env/install.sh            # build what is missing, print the bin directory
#   bash test/env/install.sh kubelet kube-scheduler   # build only the named binaries (the
#                                       # real-cluster tier: test/cluster/install.sh asks for these)
#   PULUMI_LVM_CACHE=/some/dir bash test/env/install.sh
#
# Layout (the version comes from test/env/k8s/go.mod):
#   $PULUMI_LVM_CACHE/k8s/<k8s-version>/bin/{kube-apiserver,kube-controller-manager,etcd}
#   $PULUMI_LVM_CACHE/k8s/<k8s-version>/bin/{kubelet,kube-scheduler}   only when named (test/cluster)
#   $PULUMI_LVM_CACHE/go/{build,mod}    GOCACHE / GOMODCACHE, so a re-run is warm
# PULUMI_LVM_CACHE defaults to $HOME/.cache/pulumi-lvm.
set -euo pipefail

start=$(date +%s.%N)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
mod_dir="$here/k8s"

fail() {
  echo "" >&2
  echo "############################################################" >&2
  echo "test/env/install.sh FAILED: $*" >&2
  echo "############################################################" >&2
  exit 1
}
trap 'fail "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR

elapsed() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }

# Versions of a required module: `require m v` or `m v` inside a require block.
mod_version() {
  awk -v m="$1" '$1 == "require" && $2 == m { print $3; exit } $1 == m && $2 ~ /^v/ { print $2; exit }' "$mod_dir/go.mod"
}
k8s_version=$(mod_version k8s.io/kubernetes)
[ -n "$k8s_version" ] || fail "cannot read the k8s.io/kubernetes version from $mod_dir/go.mod"
etcd_version=$(mod_version go.etcd.io/etcd/server/v3)
[ -n "$etcd_version" ] || fail "cannot read the go.etcd.io/etcd/server/v3 version from $mod_dir/go.mod"

cache="${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}"
bin="$cache/k8s/$k8s_version/bin"
mkdir -p "$bin"

# name -> Go package path. etcd is built from the etcd server module that kube-apiserver
# itself links against (Debian's etcd 3.4 is refused by this apiserver: see
# docs/testing-kubernetes.md).
declare -A pkgs=(
  [kube-apiserver]=k8s.io/kubernetes/cmd/kube-apiserver
  [kube-controller-manager]=k8s.io/kubernetes/cmd/kube-controller-manager
  [etcd]=go.etcd.io/etcd/server/v3
  [kubelet]=k8s.io/kubernetes/cmd/kubelet
  [kube-scheduler]=k8s.io/kubernetes/cmd/kube-scheduler
)

wanted=(kube-apiserver kube-controller-manager etcd)
[ "$#" -eq 0 ] || wanted=("$@")
for name in "${wanted[@]}"; do
  [ -n "${pkgs[$name]:-}" ] || fail "unknown binary '$name' (known: ${!pkgs[*]})"
done

missing=()
for name in "${wanted[@]}"; do
  [ -x "$bin/$name" ] || missing+=("$name")
done

if [ "${#missing[@]}" -eq 0 ]; then
  echo "install.sh: kubernetes $k8s_version binaries (${wanted[*]}) already in $bin (nothing to build, $(elapsed) s)"
  echo "$bin"
  exit 0
fi

# shellcheck source=sources.sh
source "$here/sources.sh"
# shellcheck source=go-build.sh
source "$here/go-build.sh"
go_toolchain "$cache" || fail "no Go toolchain to build with"
tools=$(tools_module "$cache" "$repo") || fail "cannot prepare the shared tools module (test/env/k8s) in $cache/go/tools"
require_module_version "$tools" k8s.io/kubernetes "$k8s_version" || fail "k8s.io/kubernetes is not at its pin"
require_module_version "$tools" go.etcd.io/etcd/server/v3 "$etcd_version" || fail "etcd is not at its pin"

echo "install.sh: building ${missing[*]} (kubernetes $k8s_version, etcd $etcd_version) with $("$go_bin" version) into $bin"
echo "install.sh: GOCACHE=$GOCACHE GOMODCACHE=$GOMODCACHE module $tools load: $(cut -d' ' -f1-3 /proc/loadavg)"

minor=${k8s_version#v1.}
minor=${minor%%.*}
ldflags="-s -w"
ldflags+=" -X k8s.io/component-base/version.gitVersion=$k8s_version"
ldflags+=" -X k8s.io/component-base/version.gitMajor=1"
ldflags+=" -X k8s.io/component-base/version.gitMinor=$minor"
ldflags+=" -X k8s.io/component-base/version.gitTreeState=clean"
ldflags+=" -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version"
ldflags+=" -X k8s.io/client-go/pkg/version.gitMajor=1"
ldflags+=" -X k8s.io/client-go/pkg/version.gitMinor=$minor"

# Build into a scratch directory and move into place only on success, so an interrupted
# build never leaves a binary that a re-run would take as done.
staging=$(mktemp -d "$bin/.build.XXXXXX")
trap 'rm -rf "$staging"' EXIT
for name in "${missing[@]}"; do
  t0=$(date +%s)
  echo "install.sh: go build -o $name ${pkgs[$name]}"
  (cd "$tools" && "$go_bin" build -trimpath -ldflags "$ldflags" -o "$staging/$name" "${pkgs[$name]}") \
    || fail "go build of ${pkgs[$name]} failed (see the compiler output above)"
  mv "$staging/$name" "$bin/$name"
  echo "install.sh: built $name in $(( $(date +%s) - t0 )) s"
done

for name in "${wanted[@]}"; do
  # awk, not head: head would close the pipe early and pipefail would fail the script.
  "$bin/$name" --version | awk 'NR == 1'
done
echo "install.sh: done in $(elapsed) s"
echo "$bin"
