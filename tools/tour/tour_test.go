package tour

import (
	"bytes"
	"context"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"

	"github.com/svclab/svclab/internal/roottest"
	"github.com/svclab/svclab/labs/network"
)

func tourOptions(t *testing.T, out *bytes.Buffer) Options {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	bin, err := roottest.Binary(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return Options{Out: out, Root: filepath.Join(filepath.Dir(file), "..", ".."), Binary: bin}
}

// seed004NodePortsJump is seed 004's `iptables -vnL KUBE-SERVICES -t nat` line
// of the jump to KUBE-NODEPORTS, counters aside (iptables 1.8.9 prints the
// protocol "all" as 0).
var seed004NodePortsJump = regexp.MustCompile(`KUBE-NODEPORTS +(all|0) +-- +\* +\* +0\.0\.0\.0/0 +0\.0\.0\.0/0 +/\* kubernetes service nodeports; NOTE: this must be the last rule in this chain \*/ ADDRTYPE match dst-type LOCAL`)

// TestIntegrationNodePortTour runs the main job (make lab-nodeport) on each
// CNI variant and checks the walk-through shows what seed 004 shows.
func TestIntegrationNodePortTour(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	host := roottest.SnapshotHost()
	t.Cleanup(func() {
		if diff := host.Diff(roottest.SnapshotHost()); diff != "" {
			t.Errorf("the tour changed the host's root namespace:\n%s", diff)
		}
	})
	for _, cni := range []string{"canal", "flannel-vxlan", "calico-proxyarp"} {
		t.Run(cni, func(t *testing.T) {
			var out bytes.Buffer
			if err := NodePort(context.Background(), tourOptions(t, &out), cni); err != nil {
				t.Fatalf("%v\n%s", err, out.String())
			}
			text := out.String()
			for _, want := range []string{
				"POD IP 10.100.81.180",
				"tcp dpt:30000",
				"/* default/httpserver:http */ tcp to:10.100.81.180:3000",
				"MASQUERADE",
				"dst 192.168.16.139 self permanent",
				"src=192.168.55.230 dst=192.168.16.73",
				"src=10.100.81.180 dst=10.100.40.0 sport=3000",
				"lab nodeport deleted",
			} {
				if !strings.Contains(text, want) {
					t.Errorf("the walk-through lacks %q", want)
				}
			}
			// Seed 004's jump to KUBE-NODEPORTS: any destination (upstream's
			// default localhost node ports leave out "! -d 127.0.0.0/8").
			if !seed004NodePortsJump.MatchString(text) {
				t.Errorf("the walk-through lacks seed 004's KUBE-NODEPORTS jump (%s)", seed004NodePortsJump)
			}
			if n := strings.Count(text, "the pod saw the connection come from 10.100.40.0:"); n != 7 {
				t.Errorf("%d of 7 connections were seen from HOSTA's overlay address 10.100.40.0", n)
			}
			if cni != "flannel-vxlan" && !strings.Contains(text, "169.254.1.1 dev eth0 lladdr ee:ee:ee:ee:ee:ee") {
				t.Errorf("the pod's neighbour table does not show proxy ARP's answer for 169.254.1.1")
			}
			if ns, _ := network.Namespaces("nodeport"); len(ns) != 0 {
				t.Errorf("the tour left namespaces: %v", ns)
			}
			if t.Failed() {
				t.Log(text)
			}
		})
	}
}

func TestIntegrationSingleNodeTour(t *testing.T) {
	roottest.Require(t, "builds labs from network namespaces")
	var out bytes.Buffer
	if err := SingleNode(context.Background(), tourOptions(t, &out)); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	for _, want := range []string{"KUBE-SVC-2CMXP7HKUVJN7L6M", "--probability 0.33333333349", "--probability 0.50000000000", "3000 succeeded", "lab single-node deleted"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the walk-through lacks %q\n%s", want, out.String())
		}
	}
}
