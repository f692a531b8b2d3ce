package cli

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/hostprog"
	"github.com/svclab/svclab/internal/roottest"
)

// `svclab get leftovers` lists svclab's policy-rc.d that a killed install
// left in /usr/sbin, and never an administrator's. The host's /usr/sbin is
// not touched: svclab runs in a mount namespace of its own where a
// directory of the test's is mounted over /usr/sbin (and a tmpfs over /run:
// no lab).
func TestIntegrationGetLeftoversListsSvclabsPolicyRCD(t *testing.T) {
	roottest.Require(t, "mounts over /usr/sbin in a mount namespace of its own")
	bin := roottest.SharedBinary(t)
	for _, tc := range []struct {
		name, script string
		listed       bool
	}{
		{"svclab's", "#!/bin/sh\n" + hostprog.PolicyRCDMarker + "\nexit 101\n", true},
		{"the administrator's", "#!/bin/sh\n# keep services down in this container\nexit 101\n", false},
	} {
		sbin := t.TempDir()
		if err := os.WriteFile(filepath.Join(sbin, "policy-rc.d"), []byte(tc.script), 0o755); err != nil {
			t.Fatal(err)
		}
		getLeftovers := func(args ...string) *exec.Cmd {
			return exec.Command("unshare", append([]string{"--mount", "--propagation", "private", "sh", "-ec",
				`mount --bind "$1" /usr/sbin; mount -t tmpfs tmpfs /run; bin=$2; shift 2; exec "$bin" get leftovers "$@"`, "sh", sbin, bin}, args...)...)
		}
		out, err := getLeftovers().CombinedOutput()
		listed := strings.Contains(string(out), "/usr/sbin/policy-rc.d: svclab's policy-rc.d (exit 101), left by a package install that was interrupted")
		if listed != tc.listed {
			t.Errorf("%s policy-rc.d: listed=%v, want %v; svclab get leftovers: %v\n%s", tc.name, listed, tc.listed, err, out)
		}
		if tc.listed && err != nil {
			t.Errorf("%s policy-rc.d, no lab: svclab get leftovers failed: %v\n%s", tc.name, err, out)
		}
		// -o jsonpath reads the same as a Leftover object named host.
		out, err = getLeftovers("-o", "jsonpath={range .items[*]}{.kind}/{.metadata.name}: {.status.items[*]}{end}").CombinedOutput()
		want := "Leftover/host: /usr/sbin/policy-rc.d: svclab's policy-rc.d (exit 101), left by a package install that was interrupted"
		if tc.listed && (err != nil || !strings.HasPrefix(string(out), want)) {
			t.Errorf("%s policy-rc.d: get leftovers -o jsonpath: %v\n%q\nwant it to start with %q", tc.name, err, out, want)
		}
	}
}
