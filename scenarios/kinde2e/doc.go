// Package kinde2e is `make e2e-kind`: TestIntegrationKind runs the
// conformance suite (bin/svclab-conformance.test, package
// conformance/e2e) on kind clusters made for the run, one process per
// cluster (ginkgo runs one suite per process), then `svclab conformance`
// on a cluster made with `svclab create cluster`, checks bad input, and
// checks that the host is as it was. It needs root and Docker-free
// offline node images (built when missing), and skips unless
// SVCLAB_E2E_KIND=1.
package kinde2e
