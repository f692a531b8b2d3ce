package kube

import (
	"context"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
)

// TestIPv6WorkspaceReadsIPv6Evidence: a workspace of family IPv6 runs the
// node's ip6tables-save, lists table ip6 kube-proxy and reads the node's
// IPv6 conntrack entries (`conntrack -L -f ipv6`, its real output in
// testdata); one of "" runs what it always ran.
func TestIPv6WorkspaceReadsIPv6Evidence(t *testing.T) {
	listing, err := os.ReadFile("../testdata/conntrack-ipv6.txt")
	if err != nil {
		t.Fatal(err)
	}
	f, cfg := newFakeAPI(t, "n1")
	var mu sync.Mutex
	var ran []string
	f.execOut = func(_ *fakeAPI, _, _ string, cmd []string) (string, error) {
		line := strings.Join(cmd, " ")
		mu.Lock()
		ran = append(ran, line)
		mu.Unlock()
		switch {
		case strings.Contains(line, "ip6tables-save"):
			return "*nat\n:KUBE-SERVICES - [0:0]\nCOMMIT\n", nil
		case strings.Contains(line, "conntrack -L -f ipv6"):
			return string(listing), nil
		}
		return "", nil
	}
	ctx := context.Background()
	target, err := New(ctx, cfg, Options{Source: "fake", Image: "i", ReadyTimeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { target.Close(ctx) })
	ws, err := target.Workspace(ctx, "six", 1, corev1.IPv6Protocol)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := ws.IPTablesSave(ctx, "n1", "nat", true); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.NFTables(ctx, "n1"); err != nil {
		t.Fatal(err)
	}
	flows, err := ws.Conntrack(ctx, "n1")
	if err != nil {
		t.Fatal(err)
	}
	if len(flows) != 2 || flows[0].Orig.Src.Addr().Is4() || flows[1].Orig.Src.Addr().Is4() {
		t.Errorf("IPv6 conntrack entries: %v, want the listing's two IPv6 ones", flows)
	}
	mu.Lock()
	defer mu.Unlock()
	for _, want := range []string{"ip6tables-save -t nat -c", "nft -j list table ip6 kube-proxy", "conntrack -L -f ipv6"} {
		if !slices.ContainsFunc(ran, func(line string) bool { return strings.Contains(line, want) }) {
			t.Errorf("no %q among the node runs:\n%s", want, strings.Join(ran, "\n"))
		}
	}
	for _, line := range ran {
		if strings.Contains(line, " iptables-save") || strings.Contains(line, "table ip kube-proxy") {
			t.Errorf("an IPv4 read in the IPv6 workspace: %s", line)
		}
	}
}
