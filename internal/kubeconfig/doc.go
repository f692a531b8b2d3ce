// Package kubeconfig turns a kubeconfig file, or the in-cluster config of
// a pod (a Job running the suite), into a client-go rest.Config and
// checks, before anything is created, that the cluster answers. Both
// `svclab conformance` and the conformance test binary it runs
// (bin/svclab-conformance.test) go through it, so a cluster that does not
// answer, refuses the credentials or forbids the first request is the
// same one line from either, within 10 seconds: where the config came
// from and the API server named.
package kubeconfig
