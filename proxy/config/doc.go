// Package config reads kube-proxy's own configuration file, the
// kubeproxy.config.k8s.io/v1alpha1 KubeProxyConfiguration that kubeadm stores
// under the config.conf key of the kube-system/kube-proxy ConfigMap, and turns
// it into the small, typed Config that svclab's proxy runs on.
//
// Reading is strict, like upstream kube-proxy's: malformed YAML, an unknown or
// duplicated field, a wrong apiVersion or kind, or a value out of range is an
// error that names where the document came from and which field is wrong:
//
//	kube-system/kube-proxy config.conf: mode "foo": unknown proxy mode (want iptables, ipvs, nftables)
//	kube-system/kube-proxy config.conf: iptables.masqueradeBits: unknown field
//
// Defaults are upstream's (SetDefaults_KubeProxyConfiguration in
// k8s.io/kubernetes/pkg/proxy/apis/config/v1alpha1), see defaults.go.
//
// The package is pure: it never touches the network or the kernel. Which
// proxy modes the caller can actually run is the caller's business; the
// parser accepts every mode upstream accepts on Linux and Config.CheckModeSupported
// turns "parsed but not implemented here" into a clear error.
package config
