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
// The daemon's socket is root's alone: root:root 0660 (daemon.json's
// "group": "root"; dockerd's default group is "docker") in /run/svclab/kind,
// 0700 — whoever reaches a Docker socket is root.
//
// The host's state the containers can still change is saved under
// /var/lib/svclab/kind (0700): whether /lib/modules existed (Docker creates
// it for kind's bind mount), and the sysctls outside network namespaces
// that changed while the daemon started or a cluster was being made
// (kubelet and systemd in the privileged nodes write some), each with its
// value before and svclab's. Stop puts back only those, only while they
// still hold svclab's value (hardening done meanwhile stays), and none
// saved in another boot (boot_id); also after a crash. It deletes the
// namespace.
//
//	d, err := dockerhost.Ensure(ctx, os.Stderr) // running daemon, maybe svclab's
//	d.Command("ps").Run(ctx)
//	dockerhost.Release(ctx, d)                  // stops svclab's dockerd once no cluster is left
package dockerhost
