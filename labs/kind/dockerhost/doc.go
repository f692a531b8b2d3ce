// Package dockerhost gives svclab's kind backend a Docker daemon without
// touching the host's network: when no Docker is running, it installs
// Debian's docker.io if needed and starts a dockerd of its own inside the
// network namespace svclab-docker (data under the kind cache, sockets and
// pid file under /run/svclab/kind), so Docker's bridges, iptables rules and
// forwarding sysctls live in that namespace, which has no link out of the
// machine. A Docker the user runs is used as it is and left alone.
//
// Host quirks are detected, not assumed: without CAP_SYS_RESOURCE the
// daemon's default runtime is the svclab-runc wrapper (host.RuncWrapper)
// and its OOM score adjustment is 0.
//
// Before its dockerd starts, the host's state the containers can still
// change (sysctls outside network namespaces — kubelet and systemd in the
// privileged nodes write some — and whether /lib/modules exists, which
// Docker creates for kind's bind mount) is saved under /var/lib/svclab/kind;
// Stop puts it back, also after a crash, and deletes the namespace.
//
//	d, err := dockerhost.Ensure(ctx, os.Stderr) // running daemon, maybe svclab's
//	d.Command("ps").Run(ctx)
//	dockerhost.Release(ctx, d)                  // stops svclab's dockerd once no cluster is left
package dockerhost
