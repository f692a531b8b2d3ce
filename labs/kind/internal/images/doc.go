// Package images builds svclab's own container images for kind clusters,
// offline, with `docker import` of small root filesystems made from the
// svclab binary itself:
//
//   - svclab/netexec:dev — the scenario backend, agnhost-netexec
//     compatible: ENTRYPOINT svclab, CMD netexec, so a manifest written for
//     agnhost (args: [netexec, --http-port=8080]) runs unchanged;
//   - svclab/svclab:dev — svclab on top of the kind node's root filesystem
//     (iptables, nftables, ipset, conntrack, iproute2), for the CNI agent
//     and the embedded proxy DaemonSets.
//
// A statically linked svclab is copied alone; a dynamically linked one is
// copied with its ELF interpreter and the libraries ldd lists. Images are
// rebuilt when the binary changes (its hash is a label of the image).
package images
