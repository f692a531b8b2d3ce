# svclab VM, second stage: PID 1 in the root filesystem, run by the static
# busybox at /run/svclab/busybox. Sets up the system (/dev/pts, /tmp, lo,
# cgroup2), mounts the shares listed in the run directory, runs cmd.sh with
# stdout and stderr on the virtio-serial ports svclab.stdout and
# svclab.stderr (having written the run directory's "started" file, so that
# the host knows a qemu crash came after), writes its exit code to the run directory's "exit" file and
# powers off. cmd.sh runs under the root filesystem's /bin/sh (dash): a
# busybox sh would run its own applets (ip, ps, modprobe…) instead of the
# real tools.
bb=/run/svclab/busybox
host=/run/svclab/host
exec </dev/null >/dev/console 2>&1

fail() {
	echo "svclab-vm stage2: $*"
	echo "stage2: $*" >$host/error
	$bb sync
	$bb poweroff -f
	echo o >/proc/sysrq-trigger
}

$bb mkdir -p /dev/pts /dev/shm /tmp /sys/fs/cgroup /dev/virtio-ports
$bb mount -t devpts -o gid=5,mode=620,ptmxmode=666 devpts /dev/pts
$bb mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /dev/shm
$bb mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs /tmp
$bb mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup 2>/dev/null
$bb ln -sf /proc/self/fd /dev/fd
$bb ln -sf /proc/self/fd/0 /dev/stdin
$bb ln -sf /proc/self/fd/1 /dev/stdout
$bb ln -sf /proc/self/fd/2 /dev/stderr
$bb hostname svclab-vm
$bb ip link set lo up || fail "ip link set lo up"

P9="trans=virtio,version=9p2000.L,msize=262144"
TAB=$($bb printf '\t')
while IFS="$TAB" read -r tag path mode; do
	[ -n "$tag" ] || continue
	$bb mkdir -p "$path" || fail "mkdir $path"
	cache=mmap
	[ "$mode" = ro ] && cache=loose
	$bb mount -t 9p -o "$P9,$mode,cache=$cache" "$tag" "$path" || fail "mount share $tag on $path"
done <$host/shares

if [ -s $host/binary ]; then
	$bb ln -sf "$($bb cat $host/binary)" /usr/local/bin/svclab
fi

# The ports appear once the host has announced them; wait up to 20 s.
i=0
while :; do
	for d in /sys/class/virtio-ports/vport*; do
		[ -e "$d/name" ] && $bb ln -sf "/dev/${d##*/}" "/dev/virtio-ports/$($bb cat "$d/name")"
	done
	[ -e /dev/virtio-ports/svclab.stdout ] && [ -e /dev/virtio-ports/svclab.stderr ] && break
	i=$((i + 1))
	[ $i -gt 200 ] && fail "virtio-serial ports svclab.stdout/svclab.stderr did not appear"
	$bb sleep 0.1
done

: >$host/started
$bb env -i /bin/sh $host/cmd.sh </dev/null >/dev/virtio-ports/svclab.stdout 2>/dev/virtio-ports/svclab.stderr
echo $? >$host/exit
$bb sync
$bb poweroff -f
echo o >/proc/sysrq-trigger
