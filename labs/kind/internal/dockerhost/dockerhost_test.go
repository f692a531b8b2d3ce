package dockerhost

import (
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/kind/internal/host"
)

func TestDaemonConfigFollowsTheQuirks(t *testing.T) {
	c := daemonConfig(host.Quirks{NoCapSysResource: true})
	if c["default-runtime"] != "svclab-runc" || c["oom-score-adjust"] != 0 {
		t.Fatalf("no CAP_SYS_RESOURCE: %v", c)
	}
	if hosts := c["hosts"].([]string); len(hosts) != 1 || hosts[0] != Host {
		t.Fatalf("hosts %v", hosts)
	}
	c = daemonConfig(host.Quirks{})
	if _, ok := c["default-runtime"]; ok {
		t.Fatalf("a normal host got the wrapper: %v", c)
	}
}

func TestDockerdRunsOnlyInItsNetworkNamespace(t *testing.T) {
	args := strings.Join(dockerdArgs(), " ")
	if !strings.HasPrefix(args, "nsenter --net=/run/netns/"+Namespace+" dockerd") {
		t.Fatalf("dockerd args %q", args)
	}
}

func TestSysctlSnapshotLeavesOutPerDeviceSettings(t *testing.T) {
	for dir, skip := range map[string]bool{
		"net/ipv4/conf/eth0":    true,
		"net/ipv4/conf/all":     false,
		"net/ipv6/neigh/lo":     true,
		"net/ipv4/conf/default": false,
		"kernel":                false,
		"fs/binfmt_misc":        true,
	} {
		if got := skipSysctlDir(dir); got != skip {
			t.Errorf("skipSysctlDir(%s) = %v, want %v", dir, got, skip)
		}
	}
}
