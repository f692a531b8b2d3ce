// Package nodeimage builds, fully offline, everything a kind cluster of
// svclab's needs: the Kubernetes, etcd and CoreDNS binaries (from their Go
// modules), the component images kubeadm asks for (made with `docker
// import`, under the exact tags `kubeadm config images list` prints), a
// Debian root filesystem for the node (debootstrap: systemd, Debian's
// containerd and runc, the CNI plugins, iptables/nftables/conntrack/ipset,
// curl, jq), kind's own base files (entrypoint, systemd units, containerd
// config) taken from the kind Go module, and the node image itself with the
// component images preloaded into its containerd.
//
// Every step is cached under cache.Dir(), keyed by the versions it is made
// from (Kubernetes, etcd, CoreDNS, the Debian suite and package list, the
// kind module, the host's quirks); a step whose product exists is skipped.
// Build reports each step and how long it took:
//
//	res, err := nodeimage.Build(ctx, docker, nodeimage.Options{Out: os.Stdout})
//	// res.NodeImage == "svclab/kind-node:v1.36.4-<key>"
//
// BuildFlannel builds, the same way, the two images the real flannel's
// manifest names (package flannel): flanneld and its CNI plugin from Go
// modules, on the iptables and coreutils userland of the node's root
// filesystem (the packages' files as dpkg lists them, with what they
// depend on).
//
// The only network the build needs is the Go module proxy and Debian's apt
// repository; no container registry is contacted.
package nodeimage
