// Package kinde2e is `make e2e-kind`: TestIntegrationKind checks bad
// input, runs the conformance suite (bin/svclab-conformance.test, from
// scenarios/conformance/e2e) with -kind-config on a kind cluster per pod
// network — one process per cluster, as ginkgo runs one suite per
// process — then `svclab conformance` on a cluster made with `svclab
// create cluster` (on the real flannel's, first the Service types'
// manifest and the traffic it implies, with svclab's load balancer:
// e2eServiceTypes, which TestIntegrationKindServiceTypes also runs alone on
// the cluster SVCLAB_KIND_CLUSTER names), and checks that the host is as it
// was. It needs root
// (the offline node image is built when missing) and skips unless
// SVCLAB_E2E_KIND=1.
package kinde2e
