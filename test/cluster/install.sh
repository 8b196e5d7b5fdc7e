#!/usr/bin/env bash
# Builds and caches what the real-cluster tier (test/cluster, docs/testing-cluster.md) needs beyond
# the control plane of test/env/install.sh: containerd, TopoLVM, the CSI sidecars TopoLVM's chart
# runs, the snapshot controller, csi-sanity, helm, and the Debian runc + CNI plugins.
# kubelet and kube-scheduler come from test/env/install.sh, which this script runs first. Every Go
# tool here is built from the same wrapper module as kube-apiserver (test/env/k8s, made ready by
# test/env/go-build.sh `tools_module`): one module graph, so k8s.io/*, grpc, protobuf and the other
# libraries the tools share are compiled once, at one version (docs/testing-cluster.md, "One module
# graph for the Go-built tools"); each tool's own version is checked against its pin below.
# Idempotent: a binary that is already in its versioned bin directory is not rebuilt.
#
#   bash test/cluster/install.sh           # build what is missing, print timings
#
# Layout ($cache = ${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}):
#   $cache/cluster/<name>/<version>/bin/<binary>   each tool, by its own version
#   $cache/cluster/external-snapshotter/<v>/{crd,deploy}  the snapshot CRDs and controller manifests
#   $cache/cluster/src/                            module copies the manifests come from
#   $cache/go/tools/                               the shared tools module (test/env/go-build.sh)
#   $cache/cluster/pause/bin/pause                 the sandbox process (test/cluster/pause)
#   $cache/cluster/kmod/<kernel>/lib/modules/...   the guest kernel's modules for `modprobe -d`
#   $cache/cluster/images/                         OCI archives written by the tests (images.ts)
#   $cache/go/{build,mod}                          GOCACHE / GOMODCACHE shared with test/env
# Every binary is built into a staging directory and moved into place only on success.
set -euo pipefail

# Pinned versions (why each: docs/testing-cluster.md).
CONTAINERD_VERSION=v2.4.2
TOPOLVM_VERSION=v0.41.0
PROVISIONER_VERSION=v6.3.0
SNAPSHOTTER_VERSION=v8.6.0
REGISTRAR_VERSION=v2.16.0
RESIZER_VERSION=v2.1.0
LIVENESSPROBE_VERSION=v2.18.0
CSI_TEST_VERSION=v5.6.0
HELM_VERSION=v3.22.0
APT_PACKAGES=(runc containernetworking-plugins iptables)

start=$(date +%s.%N)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
bash "$here/../env/install.sh" kubelet kube-scheduler
cache="${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}"
root="$cache/cluster"
src="$root/src"

fail() {
  echo "" >&2
  echo "############################################################" >&2
  echo "test/cluster/install.sh FAILED: $*" >&2
  echo "############################################################" >&2
  exit 1
}
trap 'fail "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
elapsed() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
say() { echo "cluster/install.sh: [$(elapsed) s] $*"; }

# ------------------------------------------------------------------------------ packages ----
missing=()
for p in "${APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) # no pipe into grep -q: SIGPIPE under pipefail
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
if [ "${#missing[@]}" -gt 0 ]; then
  [ "$(id -u)" -eq 0 ] || fail "must run as root to apt-get install ${missing[*]}"
  say "apt-get install ${missing[*]}"
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    apt-get update -qq || fail "apt-get update failed"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      fail "apt-get install ${missing[*]} failed"
  fi
fi
[ -x /usr/sbin/runc ] || [ -x /usr/bin/runc ] || fail "runc is missing after installing the runc package"
for p in bridge host-local loopback; do
  [ -x "/usr/lib/cni/$p" ] || fail "/usr/lib/cni/$p is missing after installing containernetworking-plugins"
done

# ------------------------------------------------------------------------------------ go ----
repo=$(cd "$here/../.." && pwd)
# shellcheck source=../env/sources.sh
source "$repo/test/env/sources.sh"
# shellcheck source=../env/go-build.sh
source "$repo/test/env/go-build.sh"
go_toolchain "$cache" || fail "no Go toolchain to build with"
mkdir -p "$src"

# use_tools: makes the shared tools module ready in $tools (once, and only when something is to be
# built) and checks that its graph builds each tool at its pin, whatever the other tools of the
# graph require (the snapshots' versions are their pinned hashes, test/env/sources.sha256).
tools=""
use_tools() {
  local pin snap
  [ -z "$tools" ] || return 0
  tools=$(tools_module "$cache" "$repo") || fail "cannot prepare the shared tools module (test/env/k8s) in $cache/go/tools"
  for pin in "github.com/containerd/containerd/v2 $CONTAINERD_VERSION" \
    "github.com/topolvm/topolvm $TOPOLVM_VERSION" \
    "github.com/kubernetes-csi/external-snapshotter/v8 $SNAPSHOTTER_VERSION" \
    "github.com/kubernetes-csi/external-snapshotter/client/v8 $SNAPSHOTTER_VERSION" \
    "github.com/kubernetes-csi/external-resizer/v2 $RESIZER_VERSION" \
    "github.com/kubernetes-csi/csi-test/v5 $CSI_TEST_VERSION" \
    "helm.sh/helm/v3 $HELM_VERSION"; do
    # shellcheck disable=SC2086 # two words: module and version
    require_module_version "$tools" $pin || fail "a tool is not at its pin in $tools/go.mod"
  done
  for snap in "node-driver-registrar-$REGISTRAR_VERSION" "livenessprobe-$LIVENESSPROBE_VERSION" \
    "external-resizer-$RESIZER_VERSION" "topolvm-$TOPOLVM_VERSION"; do
    [ -d "$tools/src/$snap" ] || fail "test/env/k8s/go.mod does not build from the snapshot $snap (its replace directives name another)"
  done
}

# all_present <bin dir> <binary...>
all_present() {
  local dir="$1" b
  shift
  for b in "$@"; do [ -x "$dir/$b" ] || return 1; done
}

# go_build <module dir | tools | tools:<variant>> <bin dir> <ldflags> <tags> <name=package>...
# Builds each package in the module (`tools`: the shared tools module; `tools:<variant>`: the same
# with its go.<variant>.mod, test/env/go-build.sh's tool_variants; or test/cluster/pause) into a
# staging dir, then moves it into <bin dir>.
go_build() {
  local tree="$1" bindir="$2" ldflags="$3" tags="$4" modfile="" spec name pkg staging t0
  shift 4
  case "$tree" in
  tools) use_tools && tree=$tools ;;
  tools:*)
    use_tools
    modfile="-modfile=go.${tree#tools:}.mod"
    tree=$tools
    [ -f "$tree/${modfile#-modfile=}" ] || fail "no ${modfile#-modfile=} in $tree (test/env/go-build.sh tool_variants)"
    ;;
  esac
  mkdir -p "$bindir"
  staging=$(mktemp -d "$bindir/.build.XXXXXX")
  for spec in "$@"; do
    name=${spec%%=*}
    pkg=${spec#*=}
    [ -x "$bindir/$name" ] && continue
    t0=$(date +%s)
    say "go build $name ($pkg) in $tree"
    # shellcheck disable=SC2086 # $modfile is empty or one flag
    (cd "$tree" && "$go_bin" build $modfile -trimpath -tags "$tags" -ldflags "-s -w $ldflags" \
      -o "$staging/$name" "$pkg") || { rm -rf "$staging"; fail "go build of $pkg in $tree failed (compiler output above)"; }
    mv "$staging/$name" "$bindir/$name"
    say "built $name in $(($(date +%s) - t0)) s"
  done
  rm -rf "$staging"
}

# module_tree <module> <version>: a copy of the module's source (from the Go module proxy through
# GOMODCACHE), for the manifests that ship in it.
module_tree() {
  local mod="$1" ver="$2" dir tree
  dir=$("$go_bin" mod download -json "$mod@$ver" | awk -F'"' '$2 == "Dir" { print $4 }')
  [ -n "$dir" ] && [ -d "$dir" ] || fail "go mod download $mod@$ver gave no source directory"
  tree="$src/$(echo "$mod" | tr '/' '_')@$ver"
  if [ ! -f "$tree/.complete" ]; then
    rm -rf "$tree"
    cp -r "$dir" "$tree.tmp"
    chmod -R u+w "$tree.tmp"
    mv "$tree.tmp" "$tree"
    touch "$tree/.complete"
  fi
  echo "$tree"
}

# ------------------------------------------------------------------------------ containerd --
bindir="$root/containerd/$CONTAINERD_VERSION/bin"
if ! all_present "$bindir" containerd containerd-shim-runc-v2 ctr; then
  go_build tools "$bindir" \
    "-X github.com/containerd/containerd/v2/version.Version=$CONTAINERD_VERSION" \
    "no_btrfs no_devmapper no_zfs no_aufs" \
    containerd=github.com/containerd/containerd/v2/cmd/containerd \
    containerd-shim-runc-v2=github.com/containerd/containerd/v2/cmd/containerd-shim-runc-v2 \
    ctr=github.com/containerd/containerd/v2/cmd/ctr
fi

# --------------------------------------------------------------------------------- topolvm --
bindir="$root/topolvm/$TOPOLVM_VERSION/bin"
if ! all_present "$bindir" hypertopolvm; then
  # The CSI spec of its sidecars (v1.12.0), not the graph's v1.13.0, which dropped csi.VolumeCondition
  # (test/env/go-build.sh, tool_variants); every other package is the shared graph's.
  go_build tools:topolvm "$bindir" "-X github.com/topolvm/topolvm.Version=${TOPOLVM_VERSION#v}" "" \
    hypertopolvm=github.com/topolvm/topolvm/cmd/hypertopolvm
fi

# ------------------------------------------------------------- CSI sidecars (snapshots) ----
# Their vendor/ directories are not used: a dependency module's vendor/ is ignored, the shared
# graph's versions are built instead.
for spec in "node-driver-registrar:$REGISTRAR_VERSION:csi-node-driver-registrar:github.com/kubernetes-csi/node-driver-registrar" \
  "external-resizer:$RESIZER_VERSION:csi-resizer:github.com/kubernetes-csi/external-resizer/v2" \
  "livenessprobe:$LIVENESSPROBE_VERSION:livenessprobe:github.com/kubernetes-csi/livenessprobe"; do
  IFS=: read -r name ver cmd module <<<"$spec"
  bindir="$root/$name/$ver/bin"
  all_present "$bindir" "$cmd" && continue
  go_build tools "$bindir" "-X main.version=$ver" "" "$cmd=$module/cmd/$cmd"
done

# ------------------------------------------------------- CSI sidecars (Go module proxy) ----
bindir="$root/external-provisioner/$PROVISIONER_VERSION/bin"
if ! all_present "$bindir" csi-provisioner; then
  # Its own module, as before the shared graph: v6.3.0 does not compile against client-go v0.37.1
  # (cmd/csi-provisioner/csi-provisioner.go:547:16: capacity.NewV1beta1InformerBridge(...) is a
  # CSIStorageCapacityInformer, not the TypedCSIStorageCapacityInformer v0.37 expects).
  tree=$(module_tree github.com/kubernetes-csi/external-provisioner/v6 "$PROVISIONER_VERSION")
  GOFLAGS="-mod=mod -buildvcs=false" go_build "$tree" "$bindir" "-X main.version=$PROVISIONER_VERSION" "" \
    csi-provisioner=./cmd/csi-provisioner
fi
# The CRDs ship in the client module (a module of its own, required at the same tag by the shared
# graph), the controller's manifests in the main module.
bindir="$root/external-snapshotter/$SNAPSHOTTER_VERSION/bin"
client=$(module_tree github.com/kubernetes-csi/external-snapshotter/client/v8 "$SNAPSHOTTER_VERSION")
crds="$root/external-snapshotter/$SNAPSHOTTER_VERSION/crd"
if [ ! -f "$crds/snapshot.storage.k8s.io_volumesnapshots.yaml" ]; then
  mkdir -p "$crds"
  cp "$client"/config/crd/snapshot.storage.k8s.io_*.yaml "$crds/"
fi
if ! all_present "$bindir" snapshot-controller csi-snapshotter; then
  tree=$(module_tree github.com/kubernetes-csi/external-snapshotter/v8 "$SNAPSHOTTER_VERSION")
  mkdir -p "$root/external-snapshotter/$SNAPSHOTTER_VERSION/deploy"
  cp "$tree"/deploy/kubernetes/snapshot-controller/*.yaml "$root/external-snapshotter/$SNAPSHOTTER_VERSION/deploy/"
  go_build tools "$bindir" "-X main.version=$SNAPSHOTTER_VERSION" "" \
    snapshot-controller=github.com/kubernetes-csi/external-snapshotter/v8/cmd/snapshot-controller \
    csi-snapshotter=github.com/kubernetes-csi/external-snapshotter/v8/cmd/csi-snapshotter
fi
bindir="$root/csi-test/$CSI_TEST_VERSION/bin"
if ! all_present "$bindir" csi-sanity; then
  go_build tools "$bindir" "-X main.VERSION=$CSI_TEST_VERSION" "" \
    csi-sanity=github.com/kubernetes-csi/csi-test/v5/cmd/csi-sanity
fi

# ------------------------------------------------------------------------------------ helm --
bindir="$root/helm/$HELM_VERSION/bin"
if ! all_present "$bindir" helm; then
  go_build tools "$bindir" "-X helm.sh/helm/v3/internal/version.version=$HELM_VERSION" "" helm=helm.sh/helm/v3/cmd/helm
fi

# ----------------------------------------------------------------------------------- pause --
bindir="$root/pause/bin"
want=$(cat "$here/pause/go.mod" "$here/pause/main.go" | sha256sum | awk '{ print $1 }')
if [ ! -x "$bindir/pause" ] || [ "$(cat "$root/pause/.source-sha256" 2>/dev/null)" != "$want" ]; then
  rm -f "$bindir/pause"
  go_build "$here/pause" "$bindir" "" "" pause=.
  echo "$want" >"$root/pause/.source-sha256"
fi

# --------------------------------------------------------------- guest kernel modules ----
# The cluster tier loads pod-networking modules (bridge, netfilter, NAT) into the test guest after
# boot with `modprobe -d`, from the same pinned kernel package test/vm/install.sh downloaded, so
# the guest's initramfs (and every other guest suite) stays as it is.
kabi=$(awk -F'"' '/^KERNEL_ABI=/ { print $2 }' "$here/../vm/install.sh")
kver="$kabi-amd64"
kroot="$root/kmod/$kver"
if [ ! -f "$kroot/lib/modules/$kver/modules.dep" ]; then
  deb=$(ls "$cache/vm/$kver/linux-image-$kver"_*.deb 2>/dev/null | awk 'NR == 1' || true)
  [ -n "$deb" ] || fail "no kernel package in $cache/vm/$kver: run bash test/vm/install.sh first"
  say "unpacking the modules of $deb"
  tmpk=$(mktemp -d "$root/kmod/.unpack.XXXXXX" 2>/dev/null || { mkdir -p "$root/kmod" && mktemp -d "$root/kmod/.unpack.XXXXXX"; })
  dpkg -x "$deb" "$tmpk/pkg"
  mkdir -p "$tmpk/root/lib"
  mv "$tmpk/pkg/lib/modules" "$tmpk/root/lib/modules"
  depmod -b "$tmpk/root" "$kver"
  rm -rf "$kroot" "$tmpk/pkg"
  mv "$tmpk/root" "$kroot"
  rmdir "$tmpk"
fi

say "done; binaries under $root/*/*/bin"
