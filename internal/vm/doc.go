// Package vm runs a command inside a small virtual machine that boots
// Debian's stock kernel under qemu, so that kernel features the host lacks
// (IPVS above all: many CI runners and laptops have no ip_vs and cannot load
// modules) are still exercised for real.
//
// Run boots the VM, runs one command as root, streams its stdout and stderr
// back separately, powers off and returns the command's exit code:
//
//	code, err := vm.Run(ctx, vm.Options{Command: []string{"ipvsadm", "-Ln"}})
//
// The CLI equivalent is `svclab vm run -- ipvsadm -Ln`.
//
// What the VM is made of, all cached under CacheDir (keyed by the Debian
// package versions, built once under a lock into a temporary directory and
// renamed into place, so concurrent or interrupted builds are safe; `svclab
// vm prepare` builds it, in 10–30 s):
//
//   - the kernel: package linux-image-amd64's kernel, fetched with
//     `apt-get download` and unpacked with `dpkg-deb -x`, never installed
//     on the host. Its compressed payload is uncompressed once into an ELF
//     vmlinux that qemu boots through the kernel's PVH entry: the bzImage's
//     own xz decompressor takes ~3 s under TCG;
//   - the root filesystem: a tree unpacked from the Debian packages of the
//     tools a user pokes around with (GuestPackages: iproute2, iptables
//     legacy and nft, nftables, ipset, ipvsadm, conntrack, curl, procps,
//     util-linux, kmod, tcpdump, bash, dash as /bin/sh, busybox for the
//     rest) and their dependencies, plus the kernel's complete /lib/modules
//     with a modules.dep made by depmod, so `modprobe` (and the kernel's own
//     module requests: ip_vs_rr, nf_conntrack, veth, vxlan…) work inside.
//     The guest mounts it read-only over 9p (virtio) under a tmpfs overlay,
//     so the guest may write anywhere and the cache never changes;
//   - a small initramfs, made per run in milliseconds: Debian's
//     busybox-static, the modules needed to reach the root (virtio, 9p,
//     overlay, virtio-console, resolved through modules.dep) and the init
//     scripts of guest/.
//
// I/O: the command's stdout and stderr travel on two virtio-serial ports,
// so they come back separately and are never mixed with kernel messages.
// A blocking write to a port returns only once qemu has handed the data to
// its socket, so everything the command wrote is read here by the time
// qemu has exited. The exit code is written to a per-run directory shared
// over 9p (for root under /run/svclab/vm, root's and 0700, never under
// TMPDIR: see runRoot); the command's stdin is /dev/null. The serial console (kernel and
// init messages) is kept for error reports. The VM has no network device
// (-nic none): the guest talks only to itself.
//
// Acceleration: KVM is used only when a probe boot shows that it really
// works (a /dev/kvm that exists is not enough: nested setups often hang
// or abort); otherwise TCG. The verdict is cached per host boot.
// SVCLAB_VM_ACCEL=tcg|kvm overrides the probe.
//
// The svclab binary (SVCLAB_BIN, the running executable when it is svclab,
// or svclab on PATH) is shared read-only and linked as
// /usr/local/bin/svclab in the guest.
//
// Costs on a 2-core machine under TCG: a warm run of `true` takes 5–7 s
// from Run to exit code (0.5 s to the kernel, 2–3 s of kernel boot, 1–2 s
// of init); the first build about 15–30 s (most of it unpacking).
package vm
