// Package e2e builds svclab's conformance test binary, as Kubernetes
// builds e2e.test from test/e2e:
//
//	go test -c -o bin/svclab-conformance.test ./scenarios/conformance/e2e   # make build
//
// Its TestConformance runs the specs of package conformance on a cluster
// that exists (-kubeconfig, -context, -netns, -image, -pull-policy,
// -ready-timeout: what `svclab conformance` passes), or on a kind cluster
// made for the run through e2e-framework and deleted at its end
// (-kind-config, -kind-cni, -kind-proxy, -svclab-binary: what `make
// e2e-kind` passes), with ginkgo's own -ginkgo.* flags for the report,
// focus and timeout. Package cmdline defines the flags. Without
// -kubeconfig or -kind-config (as in `go test ./...`) it skips.
package e2e
