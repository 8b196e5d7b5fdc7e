#!/usr/bin/env bash
# The image tier: podman, runc and skopeo from Debian, and the image itself (npm run image), whose
# layers are cached under $PULUMI_LVM_CACHE/image (default ~/.cache/pulumi-lvm/image) by the hash of their inputs (a warm run only
# re-writes the archive). crun is not used: crun 1.8 refuses this machine's hybrid cgroup layout.
set -euo pipefail
cd "$(dirname "$0")/../.."
need=()
for tool in podman:podman runc:runc skopeo:skopeo dpkg-deb:dpkg; do
  command -v "${tool%%:*}" >/dev/null 2>&1 || need+=("${tool#*:}")
done
if [ ${#need[@]} -gt 0 ]; then
  echo "test/image/install.sh: installing ${need[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi
start=$(date +%s)
npx tsx deploy/image/build.ts >/dev/null
echo "test/image/install.sh: image built in $(($(date +%s) - start)) s"
