#!/bin/busybox sh
# /init of the real-kernel test guest (packed into the initramfs by test/vm/install.sh; a change to
# this file or to modules.txt changes the initramfs hash, and test/vm/guest.ts refuses to boot until
# install.sh has rebuilt it).
#
# The guest's userland is the HOST's root filesystem, shared read-only over virtio 9p:
#   /host                 9p "hostroot", read-only
#   /host/{etc,var,root,tmp}  overlayfs: host files below, writes go to the system disk (they survive
#                         reboots); /tmp is an overlay too, so a checkout under the host's /tmp is visible
#   /host/run             tmpfs
#   /host/var/lib/pl-vm/system-disk  the system disk (so lsblk shows it mounted, like a node's root disk)
#   /host/{proc,sys,dev}  the guest kernel's
# then chroots into /host and runs the command service (test/vm/guest-service.mjs, copied from the
# run directory) with the host's /usr/bin/node. When the service exits, everything is unmounted and
# the guest powers off; qemu runs with -no-reboot and panic=-1, so a crash also ends qemu.
#
# Kernel command line parameters (written by guest.ts):
#   pl.run=<host path>   run directory with job.json and guest-service.mjs
#   pl.hostname=<name>   the guest's hostname
#   pl.disks=<n>         block devices to wait for (the system disk included)
#   pl.root=switch       (the cluster tier) make /host the root of pid 1's mount namespace, as
#                        switch_root does on a real node, instead of chrooting the service into it
# Console lines that guest.ts reads: "PL-INIT-FAILED: <reason>", "pl-init: [<uptime>s] <step>".

/bin/busybox mkdir -p /proc /sys /dev /bin /sbin /host /sysdisk /pl
/bin/busybox --install -s /bin
export PATH=/bin:/sbin
mount -t devtmpfs devtmpfs /dev
exec </dev/console >/dev/console 2>&1
mount -t proc proc /proc
mount -t sysfs sysfs /sys

step() { echo "pl-init: [$(cut -d' ' -f1 /proc/uptime)s] $*"; }
fail() {
  echo "PL-INIT-FAILED: $*"
  dmesg | tail -n 30
  sync
  poweroff -f
  sleep 10
}

RUN=""
HOSTNAME_ARG="pl-guest"
DISKS=0
ROOT_MODE=chroot
for arg in $(cat /proc/cmdline); do
  case "$arg" in
  pl.run=*) RUN="${arg#pl.run=}" ;;
  pl.hostname=*) HOSTNAME_ARG="${arg#pl.hostname=}" ;;
  pl.disks=*) DISKS="${arg#pl.disks=}" ;;
  pl.root=*) ROOT_MODE="${arg#pl.root=}" ;;
  esac
done
[ -n "$RUN" ] || fail "no pl.run= on the kernel command line"
hostname "$HOSTNAME_ARG"

step "loading modules"
while read -r mod; do
  [ -n "$mod" ] || continue
  insmod "/lib/modules/$mod" || fail "insmod $mod"
done </lib/modules.load

step "mounting the host root (9p)"
mount -t 9p -o trans=virtio,version=9p2000.L,ro,msize=512000,cache=loose hostroot /host ||
  fail "cannot mount the 9p share hostroot"
[ -f "/host$RUN/job.json" ] || fail "no job.json in the run directory $RUN (as seen through 9p: /host$RUN)"
cp "/host$RUN/job.json" "/host$RUN/guest-service.mjs" /pl/ || fail "cannot copy the run directory $RUN"

step "waiting for $DISKS disks"
i=0
while :; do
  n=$(ls /sys/block | grep -cv -e '^loop' -e '^ram')
  [ "$n" -ge "$DISKS" ] && break
  i=$((i + 1))
  [ "$i" -le 300 ] || fail "only $n of $DISKS disks appeared after 30 s: $(ls /sys/block | tr '\n' ' ')"
  sleep 0.1
done

SYSDEV=""
for s in /sys/block/*/serial; do
  [ "$(cat "$s" 2>/dev/null)" = "pl-system" ] && SYSDEV="$(basename "$(dirname "$s")")"
done
[ -n "$SYSDEV" ] || fail "no disk with serial pl-system (the system disk)"
mount -t ext4 "/dev/$SYSDEV" /sysdisk || fail "cannot mount the system disk /dev/$SYSDEV"

step "overlays on /etc /var /root /tmp (upper on /dev/$SYSDEV)"
for d in etc var root tmp; do
  mkdir -p "/sysdisk/overlay/$d/upper" "/sysdisk/overlay/$d/work"
  chmod "$(stat -c %a "/host/$d")" "/sysdisk/overlay/$d/upper" # the merged root takes the upper's mode
  mount -t overlay overlay \
    -o "lowerdir=/host/$d,upperdir=/sysdisk/overlay/$d/upper,workdir=/sysdisk/overlay/$d/work" "/host/$d" ||
    fail "cannot mount the overlay on /$d"
done

# lvm2 without udev and without daemons (lvmetad, lvmpolld, dmeventd): lvm creates the /dev nodes
# itself. lvmlocal.conf is read after lvm.conf and overrides it.
cat >/host/etc/lvm/lvmlocal.conf <<'EOF'
# Written by the pulumi-lvm test guest's init (test/vm/guest-init.sh): no udev, no daemons here.
devices {
	use_devicesfile = 0
	obtain_device_list_from_udev = 0
}
activation {
	udev_sync = 0
	udev_rules = 0
	monitoring = 0
}
global {
	use_lvmpolld = 0
}
local {
}
EOF
echo "$HOSTNAME_ARG" >/host/etc/hostname

mount -t tmpfs -o mode=0755 tmpfs /host/run || fail "tmpfs /run"
mount --bind /proc /host/proc || fail "bind /proc"
mount --bind /sys /host/sys || fail "bind /sys"
mount --bind /dev /host/dev || fail "bind /dev"
mkdir -p /dev/pts /dev/shm
mount -t devpts devpts /host/dev/pts
mount -t tmpfs -o mode=1777 tmpfs /host/dev/shm
mkdir -p /host/run/lock /host/run/lvm /host/run/pl-vm
# The system disk is in use, as a node's root disk is: make that visible from inside the chroot.
mkdir -p /host/var/lib/pl-vm/system-disk
mount --bind /sysdisk /host/var/lib/pl-vm/system-disk
cp /pl/job.json /pl/guest-service.mjs /host/run/pl-vm/

step "network: eth0 10.0.2.15/24 via 10.0.2.2"
ip link set lo up
ip link set eth0 up || fail "no eth0 (virtio-net)"
ip addr add 10.0.2.15/24 dev eth0
ip route add default via 10.0.2.2

SERVICE_ENV="PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 LVM_SUPPRESS_FD_WARNINGS=1"
if [ "$ROOT_MODE" = switch ]; then
  # A real node's pid 1 has the node's root as the root of its mount namespace. Here the namespace's
  # root is the initramfs, and a chroot does not change that: runc's pivot_root then leaves every
  # container's root beside the namespace's root, and `runc exec` (exec probes, kubectl exec), which
  # joins a container's mount namespace at that root, finds the initramfs instead of the image
  # ("stat /lvmd: no such file"). Moving /host onto / first, as switch_root does, makes the mount
  # namespaces of pid 1, containerd and every container look as they do on a node; `nsenter -t 1`
  # then lands in the node's root too. The rest of this script runs there, with the node's static
  # busybox (test/vm/install.sh installs busybox-static on the host).
  step "switching root to /host, then starting the command service"
  cd /host || fail "cd /host"
  mount --move /host / || fail "mount --move /host /"
  exec chroot . /bin/busybox sh -c "
    /bin/busybox env -i $SERVICE_ENV /usr/bin/node /run/pl-vm/guest-service.mjs /run/pl-vm/job.json &
    wait \$!
    echo \"pl-init: command service exited with \$?; sync and power off\"
    /bin/busybox sync
    /bin/busybox poweroff -f
    /bin/busybox sleep 10"
fi

step "starting the command service"
chroot /host /usr/bin/env -i \
  PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 \
  LVM_SUPPRESS_FD_WARNINGS=1 \
  /usr/bin/node /run/pl-vm/guest-service.mjs /run/pl-vm/job.json &
wait $!
code=$?
step "command service exited with $code; unmounting"

sync
for m in $(awk '{print $2}' /proc/mounts | tac); do
  case "$m" in
  /host/proc | /host/sys | /host/dev) ;; # after everything below them is gone
  /host/*) umount "$m" 2>/dev/null || umount -l "$m" ;;
  esac
done
umount -l /host/dev /host/sys /host/proc 2>/dev/null
umount -l /host 2>/dev/null
umount /sysdisk || { sync; umount -l /sysdisk; }
sync
step "power off"
poweroff -f
sleep 10
