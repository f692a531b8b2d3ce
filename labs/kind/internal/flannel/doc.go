// Package flannel is the real flannel for svclab's kind clusters
// (`svclab create cluster --cni flannel`), as opposed to svclab's
// flannel-compatible CNI (--cni flannel-vxlan, package cni): upstream's
// kube-flannel.yml of github.com/flannel-io/flannel, kept in this
// directory with its one change marked (cniVersion 1.0.0 → 0.4.0, for the
// CNI plugin that builds offline), and applied unchanged otherwise.
//
// The images that manifest names are built by package nodeimage from Go
// modules and tagged with upstream's names, so nothing is rewritten:
//
//	ghcr.io/flannel-io/flannel:v0.28.10              flanneld and install-conf of github.com/flannel-io/flannel v0.28.10,
//	                                                 on the iptables userland of the kind node's root filesystem
//	ghcr.io/flannel-io/flannel-cni-plugin:v1.9.1-…   the flannel CNI plugin of github.com/containernetworking/plugins
//	                                                 v0.9.1 (plugins/meta/flannel; the plugin's own module is out of
//	                                                 reach offline), with coreutils for the install step's cp
//
// This package is the pure part: the manifest, what it says (Parse), and
// upstream's text restored from it (Upstream), checked against the hash of
// the module's file.
package flannel
