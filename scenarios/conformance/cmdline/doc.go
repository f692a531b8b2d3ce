// Package cmdline is the command line of svclab's conformance test
// binary, bin/svclab-conformance.test (built by `make build` from
// scenarios/conformance/e2e, as Kubernetes ships e2e.test): the binary
// registers its flags here, and `svclab conformance` and the kind
// end-to-end test build its arguments here, so a renamed flag fails to
// compile instead of failing in a classroom.
//
// The package links no test framework: the CLI imports it. The ginkgo
// settings (JUnit report, focus, label filter, timeout, verbosity) are
// passed as ginkgo's own -ginkgo.* flags, which ginkgo registers in the
// binary.
package cmdline
