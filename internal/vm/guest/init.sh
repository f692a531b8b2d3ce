#!/bin/busybox sh
# svclab VM, first stage (the initramfs's /init, run by busybox as PID 1).
# Loads the modules listed in /modules (virtio, 9p, overlay, virtio-console,
# in dependency order), mounts the run directory share and the root
# filesystem share (read-only 9p under a tmpfs overlay), and switches to it.
# Messages go to the serial console; a failure is also written to the run
# directory's "error" file, then the VM powers off.
/bin/busybox --install -s /bin
export PATH=/bin

fail() {
	echo "svclab-vm init: $*" >&2
	[ -d /host/. ] && echo "init: $*" >/host/error
	sync
	poweroff -f
	sleep 5
	echo o >/proc/sysrq-trigger
}

mkdir -p /proc /sys /dev /host /lower /rw /newroot
mount -t proc proc /proc || fail "mount /proc"
mount -t sysfs sysfs /sys || fail "mount /sys"
mount -t devtmpfs devtmpfs /dev || fail "mount /dev"

while read -r m; do
	insmod "/lib/modules/$m" || fail "insmod $m"
done </modules

P9="trans=virtio,version=9p2000.L,msize=262144"
mount -t 9p -o "$P9,cache=none" svclab.run /host || fail "mount the run directory (9p tag svclab.run)"
mount -t 9p -o "$P9,ro,cache=loose" svclab.root /lower || fail "mount the root filesystem (9p tag svclab.root)"
mount -t tmpfs -o mode=0755 tmpfs /rw || fail "mount tmpfs"
mkdir -p /rw/upper /rw/work
mount -t overlay -o lowerdir=/lower,upperdir=/rw/upper,workdir=/rw/work overlay /newroot || fail "mount the overlay root"

mkdir -p /newroot/run
mount -t tmpfs -o mode=0755,nosuid,nodev tmpfs /newroot/run || fail "mount /run"
mkdir -p /newroot/run/svclab/host /newroot/dev /newroot/proc /newroot/sys
cp /bin/busybox /stage2 /newroot/run/svclab/ || fail "copy stage 2"
mount --move /host /newroot/run/svclab/host || fail "move the run directory"
mount --move /dev /newroot/dev
mount --move /proc /newroot/proc
mount --move /sys /newroot/sys
exec switch_root /newroot /run/svclab/busybox sh /run/svclab/stage2
