package workshop

import (
	"fmt"
	"strings"
	"testing"
)

// dualFacts are fakeFacts of a dual-stack lab.
type dualFacts struct{ fakeFacts }

func (dualFacts) ClusterIPs(ns, name string) ([]string, error) {
	if name == "httpserver" {
		return []string{"10.254.0.11", "fd00:10:96::b"}, nil
	}
	if name == "v4only" {
		return []string{"10.254.0.12"}, nil
	}
	return nil, fmt.Errorf("no Service %s/%s", ns, name)
}

func (dualFacts) PodIPs(pod string) ([]string, error) {
	if pod == "httpserver" {
		return []string{"10.100.81.180", "fd00:10:244:51::b4"}, nil
	}
	return nil, fmt.Errorf("no pod %s", pod)
}

func (dualFacts) HostIPs(host string) ([]string, error) {
	return []string{"192.168.16.73", "fd00::c0a8:1049"}, nil
}

// TestExpandFamiliesGolden expands the family functions against a
// dual-stack lab's facts (testdata/expand_families.golden), errors
// included; a lab whose facts have no Families has no such functions.
func TestExpandFamiliesGolden(t *testing.T) {
	var b strings.Builder
	for _, text := range []string{
		`{{ clusterIPOf "default" "httpserver" "IPv4" }} {{ clusterIPOf "default" "httpserver" "IPv6" }}`,
		`{{ hostPort (clusterIPOf "default" "httpserver" "IPv6") 80 }}`,
		`{{ hostPort (clusterIPOf "default" "httpserver" "IPv4") 80 }}`,
		`{{ podIPOf "httpserver" "IPv6" }} {{ hostIPOf "hosta" "IPv6" }}`,
		`-d {{ re (clusterIPOf "default" "httpserver" "IPv6") }}/128`,
		`{{ clusterIPOf "default" "v4only" "IPv6" }}`,
		`{{ clusterIPOf "default" "httpserver" "ipv6" }}`,
		`{{ podIPOf "nosuch" "IPv4" }}`,
	} {
		got, err := Expand(text, dualFacts{})
		if err != nil {
			got = "error: " + err.Error()
		}
		fmt.Fprintf(&b, "%s\n  → %s\n", text, got)
	}
	checkGolden(t, "expand_families.golden", b.String())
	if _, err := Expand(`{{ clusterIPOf "default" "httpserver" "IPv4" }}`, fakeFacts{}); err == nil {
		t.Error("clusterIPOf expanded with facts that have no families")
	}
}
