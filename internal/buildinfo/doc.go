// Package buildinfo says which svclab this is and which Kubernetes API it
// speaks, from the module build information Go embeds in the binary
// (runtime/debug.ReadBuildInfo): svclab's version or VCS revision, and
// the version of the k8s.io/api module it was built with.
package buildinfo
