#!/usr/bin/env bash
# Installs what the test tiers need, idempotently (fast when everything is present):
#   - lvm2 and friends for the host tier (loop devices, lvm metadata), Chromium for the HTML pages,
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

# Debian's OpenSSH server, for the bare-hosts tier: the qemu guest runs the host's /usr/sbin/sshd and
# sftp-server through its 9p root (test/pulumi/guest-sshd.ts). Its postinst starts no host sshd where
# policy-rc.d forbids it (as in these containers); the tests never use the host's.
if [ ! -x /usr/sbin/sshd ] || [ ! -x /usr/lib/openssh/sftp-server ] || ! command -v ssh-keygen >/dev/null; then
  echo "test/setup.sh: installing openssh-server"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssh-server >/dev/null
fi

# Debian's prometheus package for its promtool: the alert rules' unit tests (promtool test rules,
# src/components/monitoring/promtool.test.ts). The package's service is not started (policy-rc.d here).
if ! command -v promtool >/dev/null; then
  echo "test/setup.sh: installing prometheus (for promtool)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
fi

# Debian's Chromium, for the tests of the HTML pages plan --html and status --html write
# (test/cli/html-page.test.ts drives it through playwright-core; no browser is downloaded).
if ! command -v chromium >/dev/null; then
  echo "test/setup.sh: installing chromium (for the HTML page tests)"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi

# A real etcd + kube-apiserver (+ controller-manager) built from their Go modules; cached by version.
bash test/env/install.sh

# The Pulumi CLI and its Node.js language host built from their Go modules, for the engine tier (test/pulumi).
bash test/pulumi/install.sh

# qemu, a pinned Debian kernel with device-mapper and our initramfs, for the real-kernel tier.
bash test/vm/install.sh

# podman, runc, skopeo and the pulumi-lvm image (npm run image, layers cached by their inputs), for test/image.
bash test/image/install.sh

# The rest (the Command and Kubernetes provider plugins, the real cluster's binaries) is built by
# test/setup-late.sh, which `npm test` (test/run.sh) starts beside the first tests: see there.
