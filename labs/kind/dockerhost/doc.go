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
// Every svclab process using svclab's daemon holds a shared flock on
// /run/svclab/kind/docker.users from Ensure (or Running) to Release (or
// Done); Release stops the daemon only when no kind cluster is left and no
// other process holds that lock, so a delete never stops the daemon under a
// running build or create.
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
