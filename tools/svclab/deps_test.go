package main

import (
	"os/exec"
	"strings"
	"testing"
)

// testFrameworks are what the svclab binary must not link: it runs as the
// node proxy, the pods' server and the CNI plugin, and the conformance
// suite that needs them is a test binary of its own
// (bin/svclab-conformance.test, from scenarios/conformance/e2e).
var testFrameworks = []string{
	"github.com/onsi/ginkgo",
	"github.com/onsi/gomega",
	"sigs.k8s.io/e2e-framework",
	"sigs.k8s.io/controller-runtime",
	"testing",
}

// TestSvclabLinksNoTestFramework runs `go list -deps` on this command
// and fails on any package of a test framework (or the testing package).
func TestSvclabLinksNoTestFramework(t *testing.T) {
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skip("skipped: `go` is not on PATH, so the dependencies of tools/svclab cannot be listed")
	}
	out, err := exec.Command(goBin, "list", "-deps", "github.com/svclab/svclab/tools/svclab").CombinedOutput()
	if err != nil {
		t.Fatalf("go list -deps github.com/svclab/svclab/tools/svclab: %v\n%s", err, out)
	}
	for _, pkg := range strings.Fields(string(out)) {
		for _, fw := range testFrameworks {
			if pkg == fw || strings.HasPrefix(pkg, fw+"/") {
				t.Errorf("tools/svclab links %s (a test framework): run `go list -deps ./tools/svclab` and `go mod why %s` to see which import brings it", pkg, pkg)
			}
		}
	}
}
