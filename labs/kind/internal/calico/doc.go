// Package calico is the upstream Calico for svclab's kind clusters
// (`svclab create cluster --cni calico`), as opposed to svclab's offline
// calico-compatible CNI (--cni calico-proxyarp, package cni).
//
// Nothing of upstream is kept in the repository: a pinned release (Pin:
// version, the manifest's URL at that tag, its sha256) is downloaded at
// create time into svclab's cache, bounded in size and verified by its
// hash before anything is applied. Its images come from a container
// registry, so a reachability probe of that registry comes first; without
// one, --cni calico-proxyarp is the offline choice.
//
// This package is the pure part and the fetching (probe, download, verify,
// pool check); package kind applies the manifest and waits for calico-node
// and calico-kube-controllers. The mode is untested on the machine that
// built it (no registry reachable there).
package calico
