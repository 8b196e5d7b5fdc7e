#!/usr/bin/env bash
# Installs what the real-kernel test tier (test/vm, docs/testing-real-kernel.md) needs: qemu, a
# PINNED Debian kernel, and an initramfs whose /init is test/vm/guest-init.sh with the modules of
# test/vm/modules.txt. Idempotent: a warm run only checks and prints the paths.
#
#   bash test/vm/install.sh
#   PULUMI_LVM_CACHE=/some/dir bash test/vm/install.sh
#
# Layout ($cache = ${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}):
#   $cache/vm/<kernel-version>/linux-image-*.deb           the downloaded package (kept)
#   $cache/vm/<kernel-version>/vmlinuz
#   $cache/vm/<kernel-version>/initramfs-<init-hash>.cpio.gz
#   $cache/vm/<kernel-version>/initramfs-<init-hash>.modules  the module load order (for humans)
#   $cache/vm/runs/<hostname>-XXXXXX/                        a running guest's images and logs (guest.ts)
# Building a new initramfs deletes the ones of other hashes.
# <init-hash> is the first 16 hex digits of sha256(guest-init.sh + modules.txt); test/vm/guest.ts
# computes the same hash, so a stale initramfs is never booted.
set -euo pipefail

# The pinned kernel: bump both together (see "Bumping the kernel" in docs/testing-real-kernel.md).
KERNEL_ABI="6.1.0-47"
KERNEL_PKG_VERSION="6.1.170-3"

# Host packages: qemu and the initramfs tools, and the userland the guest borrows from the host
# (lvm2 + thin_check, mkfs.xfs/mkfs.ext4, lsblk/wipefs, node is already the project's).
APT_PACKAGES=(qemu-system-x86 busybox-static cpio kmod xz-utils zstd
  lvm2 thin-provisioning-tools xfsprogs e2fsprogs util-linux)

start=$(date +%s.%N)
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
kver="$KERNEL_ABI-amd64"
pkg="linux-image-$kver"
cache="${PULUMI_LVM_CACHE:-$HOME/.cache/pulumi-lvm}"
dir="$cache/vm/$kver"

fail() {
  echo "" >&2
  echo "############################################################" >&2
  echo "test/vm/install.sh FAILED: $*" >&2
  echo "############################################################" >&2
  exit 1
}
trap 'fail "command failed (exit $?) at line $LINENO: $BASH_COMMAND"' ERR
elapsed() { awk -v s="$start" -v e="$(date +%s.%N)" 'BEGIN { printf "%.1f", e - s }'; }
say() { echo "install.sh: [$(elapsed) s] $*"; }

[ "$(id -u)" -eq 0 ] || fail "must run as root (apt-get install, mknod /dev/console in the initramfs)"
[ "$(uname -m)" = "x86_64" ] || fail "only x86_64 hosts are supported (qemu-system-x86_64 + an amd64 kernel)"

# ------------------------------------------------------------------------------ packages ----
missing=()
for p in "${APT_PACKAGES[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true) # no pipe into grep -q: SIGPIPE under pipefail
  [ "$status" = "install ok installed" ] || missing+=("$p")
done
apt_updated=0
apt_update() {
  [ "$apt_updated" -eq 1 ] && return 0
  say "apt-get update"
  apt-get update -qq || fail "apt-get update failed"
  apt_updated=1
}
if [ "${#missing[@]}" -gt 0 ]; then
  say "apt-get install ${missing[*]}"
  # Install from the current lists first; update only when that fails (lists missing or stale).
  if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null; then
    apt_update
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
      fail "apt-get install ${missing[*]} failed"
  fi
else
  say "packages present: ${APT_PACKAGES[*]}"
fi
command -v qemu-system-x86_64 >/dev/null || fail "qemu-system-x86_64 is not on PATH after installing qemu-system-x86"
[ -x /bin/busybox ] || fail "/bin/busybox is missing after installing busybox-static"
[ -x /usr/bin/node ] || fail "/usr/bin/node is missing: the guest runs the host's node (v20) as its userland"

# -------------------------------------------------------------------------------- kernel ----
mkdir -p "$dir"
deb=$(ls "$dir/${pkg}_"*.deb 2>/dev/null | sed -n 1p || true)
if [ -z "$deb" ]; then
  say "apt-get download $pkg=$KERNEL_PKG_VERSION (about 70 MB)"
  tmpd=$(mktemp -d "$dir/.download.XXXXXX")
  if ! (cd "$tmpd" && apt-get download -q "$pkg=$KERNEL_PKG_VERSION" >/dev/null 2>&1); then
    apt_update
    if ! (cd "$tmpd" && apt-get download -q "$pkg=$KERNEL_PKG_VERSION"); then
      rm -rf "$tmpd"
      offered=$(apt-cache search --names-only '^linux-image-6\.1\.0-[0-9]+-amd64$' | awk '{print $1}' | sort -V | tr '\n' ' ')
      fail "cannot download $pkg=$KERNEL_PKG_VERSION (Debian drops old kernel ABIs at point releases).
Kernels apt offers now: ${offered:-none}
Bump KERNEL_ABI and KERNEL_PKG_VERSION in test/vm/install.sh (apt-cache policy <package> gives the version)."
    fi
  fi
  mv "$tmpd"/*.deb "$dir/"
  rmdir "$tmpd"
  deb=$(ls "$dir/${pkg}_"*.deb | sed -n 1p)
else
  say "kernel package cached: $deb"
fi

init_hash=$(cat "$here/guest-init.sh" "$here/modules.txt" | sha256sum | cut -c1-16)
initramfs="$dir/initramfs-$init_hash.cpio.gz"
if [ -s "$dir/vmlinuz" ] && [ -s "$initramfs" ]; then
  say "up to date: kernel $kver, initramfs $init_hash (nothing to build)"
  echo "kernel:    $dir/vmlinuz"
  echo "initramfs: $initramfs"
  echo "install.sh: done in $(elapsed) s"
  exit 0
fi

work=$(mktemp -d "$dir/.build.XXXXXX")
trap 'rm -rf "$work"' EXIT
say "unpacking $deb"
dpkg -x "$deb" "$work/pkg"
moddir="$work/pkg/lib/modules/$kver"
[ -d "$moddir" ] || fail "the package has no lib/modules/$kver"
vmlinuz="$work/pkg/boot/vmlinuz-$kver"
[ -s "$vmlinuz" ] || fail "the package has no boot/vmlinuz-$kver"
say "depmod -b $work/pkg $kver"
depmod -b "$work/pkg" "$kver"

# ------------------------------------------------------ modules in dependency (load) order ----
# modules.dep: "kernel/a/x.ko: kernel/b/dep1.ko kernel/c/dep2.ko" where the deps are listed so
# that the last one must be loaded first.
wanted=$(sed -e 's/#.*//' -e 's/[[:space:]]//g' "$here/modules.txt" | grep -v '^$' | tr '-' '_' | tr '\n' ' ')
order=$(awk -v wanted="$wanted" '
  function norm(p,   b) { b = p; sub(/.*\//, "", b); sub(/\.ko(\.xz|\.zst|\.gz)?$/, "", b); gsub(/-/, "_", b); return b }
  BEGIN { n = split(wanted, w, " ") }
  FILENAME ~ /modules\.builtin$/ { builtin[norm($1)] = 1; next }
  {
    path = $1; sub(/:$/, "", path)
    name = norm(path)
    file[name] = path
    deps[name] = ""
    for (i = NF; i >= 2; i--) deps[name] = deps[name] " " $i
  }
  function add(p) { if (!(p in seen)) { seen[p] = 1; out[++count] = p } }
  END {
    for (k = 1; k <= n; k++) {
      m = w[k]
      if (!(m in file)) {
        if (m in builtin) continue
        print "MISSING " m; bad = 1; continue
      }
      split(deps[m], d, " ")
      for (j = 1; j in d; j++) add(d[j])
      add(file[m])
    }
    for (k = 1; k <= count; k++) print out[k]
    exit bad
  }' "$moddir/modules.builtin" "$moddir/modules.dep") ||
  fail "modules neither in modules.dep nor built in: $(echo "$order" | grep '^MISSING' | cut -d' ' -f2 | tr '\n' ' ')"

# ------------------------------------------------------------------------------ initramfs ----
say "building the initramfs ($(echo "$order" | wc -l) modules)"
root="$work/root"
mkdir -p "$root"/{bin,sbin,dev,proc,sys,host,sysdisk,pl,lib/modules}
cp /bin/busybox "$root/bin/busybox"
cp "$here/guest-init.sh" "$root/init"
chmod 0755 "$root/init" "$root/bin/busybox"
mknod -m 0600 "$root/dev/console" c 5 1
mknod -m 0666 "$root/dev/null" c 1 3
: >"$root/lib/modules.load"
while read -r rel; do
  src="$moddir/$rel"
  base=$(basename "$rel")
  case "$base" in
  *.ko.xz) xz -dc "$src" >"$root/lib/modules/${base%.xz}" && base="${base%.xz}" ;;
  *.ko.zst) zstd -qdc "$src" >"$root/lib/modules/${base%.zst}" && base="${base%.zst}" ;;
  *.ko) cp "$src" "$root/lib/modules/$base" ;;
  *) fail "unexpected module file $rel" ;;
  esac
  echo "$base" >>"$root/lib/modules.load"
done <<<"$order"
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet) | gzip -1 >"$work/initramfs.cpio.gz"

cp "$vmlinuz" "$work/vmlinuz"
mv "$work/vmlinuz" "$dir/vmlinuz"
cp "$root/lib/modules.load" "$dir/initramfs-$init_hash.modules"
mv "$work/initramfs.cpio.gz" "$initramfs"
# Older initramfs builds (other init hashes) are not booted any more; qemu reads its -initrd at start.
find "$dir" -maxdepth 1 -name 'initramfs-*' ! -name "initramfs-$init_hash.*" -delete
say "built $initramfs ($(du -h "$initramfs" | cut -f1)), modules: $(tr '\n' ' ' <"$root/lib/modules.load")"
echo "kernel:    $dir/vmlinuz"
echo "initramfs: $initramfs"
echo "install.sh: done in $(elapsed) s"
