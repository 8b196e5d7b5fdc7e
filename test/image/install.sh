#!/usr/bin/env bash
# The image tier: podman, runc and skopeo from Debian, qemu-user-static for the arm64 image's test
# (test/image/arm64.test.ts runs its programs through binfmt_misc), and the image itself
# (npm run image: linux/amd64 and linux/arm64), whose layers are cached under $PULUMI_LVM_CACHE/image
# (default ~/.cache/pulumi-lvm/image) by the hash of their inputs, the .deb files by their sha256 (a
# warm run only re-writes the archive). crun is not used: crun 1.8 refuses this machine's hybrid
# cgroup layout.
set -euo pipefail
cd "$(dirname "$0")/../.."
# binfmt_misc may be unmounted where no init mounted it; mounted before qemu-user-static's install,
# whose package registers its interpreters there.
binfmt=/proc/sys/fs/binfmt_misc
[ -e "$binfmt/register" ] || mount -t binfmt_misc binfmt_misc "$binfmt"
need=()
for tool in podman:podman runc:runc skopeo:skopeo dpkg-deb:dpkg qemu-aarch64-static:qemu-user-static update-binfmts:binfmt-support; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "test/image/install.sh: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
# qemu-user-static's binfmt entry (flag F: the kernel opens the interpreter now, so it also starts
# arm64 programs inside a chroot), registered by its package or here.
[ -e "$binfmt/qemu-aarch64" ] || update-binfmts --enable qemu-aarch64
grep -qx enabled "$binfmt/qemu-aarch64"
start=$(date +%s)
npx tsx deploy/image/build.ts >/dev/null
echo "test/image/install.sh: image built in $(($(date +%s) - start)) s"
