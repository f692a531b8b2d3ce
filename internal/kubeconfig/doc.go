// Package kubeconfig turns a kubeconfig file into a client-go rest.Config
// and checks, before anything is created, that the cluster answers. Both
// `svclab conformance` and the conformance test binary it runs
// (bin/svclab-conformance.test) go through it, so an unreachable cluster
// is the same one clear error from either: the kubeconfig file and the
// API server named.
package kubeconfig
