package network

import (
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/svclab/svclab/labs/netns/topology"
)

// TestNamespaceNamesDoNotCollide: lab "a" with pod "b-c" and lab "a-b"
// with host "c" (both svclab-a-b-c before the dot) have namespaces of their
// own; over a small world of labs and hosts that share every prefix, no two
// pairs share a name, every name splits back into its pair, and a lab's
// prefix starts its own names only.
func TestNamespaceNamesDoNotCollide(t *testing.T) {
	if a, ab := NamespaceName("a", "b-c"), NamespaceName("a-b", "c"); a == ab {
		t.Fatalf("lab a's pod b-c and lab a-b's host c share the namespace %s", a)
	}
	if got := NamespaceName("a", "b-c"); got != "svclab-a.b-c" {
		t.Errorf(`NamespaceName("a", "b-c") = %s, want svclab-a.b-c`, got)
	}
	labs := []string{"a", "b", "a-b", "a-b-c", "ab", "a1", strings.Repeat("z", topology.MaxLabNameLen)}
	hosts := []string{"c", "b-c", "b.c", "c.d-e", "router", "node1", "web-v2.0.1-abc12", strings.Repeat("h", 63)}
	owner := map[string][2]string{}
	for _, lab := range labs {
		for _, host := range hosts {
			ns := NamespaceName(lab, host)
			checkNamespaceName(t, lab, host, ns)
			if prev, ok := owner[ns]; ok {
				t.Errorf("(%s, %s) and (%s, %s) share %s", prev[0], prev[1], lab, host, ns)
			}
			owner[ns] = [2]string{lab, host}
			for _, other := range labs {
				if strings.HasPrefix(ns, labPrefix(other)) != (other == lab) {
					t.Errorf("%s (lab %s) under lab %s's prefix %s: %v", ns, lab, other, labPrefix(other), other != lab)
				}
			}
		}
	}
	for _, bad := range []string{"svclab-docker", "svclab-.x", "svclab-a.", "other-a.b", "svclab-nft"} {
		if lab, host, ok := SplitNamespaceName(bad); ok {
			t.Errorf("SplitNamespaceName(%q) = %q, %q: want no lab's", bad, lab, host)
		}
	}
}

// checkNamespaceName: ns splits back into (lab, host) and is a name
// iproute2 accepts (/run/netns/NAME: not empty, "." or "..", no "/", at
// most NAME_MAX bytes).
func checkNamespaceName(t *testing.T, lab, host, ns string) {
	t.Helper()
	if l, h, ok := SplitNamespaceName(ns); !ok || l != lab || h != host {
		t.Errorf("SplitNamespaceName(%q) = %q, %q, %v; want %q, %q", ns, l, h, ok, lab, host)
	}
	if ns == "" || ns == "." || ns == ".." || strings.Contains(ns, "/") || len(ns) > 255 {
		t.Errorf("%q is no name for ip netns", ns)
	}
}

// validHost: a node, client or router name (a DNS label) or a pod's (a DNS
// subdomain), of at most 63 characters.
func validHost(host string) bool {
	return len(host) <= 63 && len(validation.IsDNS1123Subdomain(host)) == 0
}

// FuzzNamespaceName: two (lab, host) pairs of valid names have one
// namespace name only when they are the same pair; a name splits back into
// its pair, only its own lab's prefix starts it, and ip netns accepts it.
func FuzzNamespaceName(f *testing.F) {
	f.Add("a", "b-c", "a-b", "c")
	f.Add("a", "b.c", "a-b", "c")
	f.Add("a-b", "c.d", "a", "b-c.d")
	f.Add("demo", "router", "demo", "router")
	f.Fuzz(func(t *testing.T, lab1, host1, lab2, host2 string) {
		if topology.ValidateLabName(lab1) != nil || topology.ValidateLabName(lab2) != nil || !validHost(host1) || !validHost(host2) {
			return
		}
		n1, n2 := NamespaceName(lab1, host1), NamespaceName(lab2, host2)
		checkNamespaceName(t, lab1, host1, n1)
		checkNamespaceName(t, lab2, host2, n2)
		same := lab1 == lab2 && host1 == host2
		if (n1 == n2) != same {
			t.Fatalf("(%q, %q) → %s and (%q, %q) → %s", lab1, host1, n1, lab2, host2, n2)
		}
		if strings.HasPrefix(n1, labPrefix(lab2)) != (lab1 == lab2) {
			t.Fatalf("%s of lab %q under lab %q's prefix %s", n1, lab1, lab2, labPrefix(lab2))
		}
	})
}
