package network

import (
	"net/netip"
	"slices"
	"strings"
	"testing"

	"github.com/svclab/svclab/labs/netns/topology"
)

// TestPlanLoadBalancerRoutes: the router sends the load balancer pool (a
// range, as its covering prefixes) and the external IP blocks to the first
// node, and nothing else changes; every route of the router leads to a
// host of the lab, none out of the machine.
func TestPlanLoadBalancerRoutes(t *testing.T) {
	doc := strings.Replace(labYAML, "  clients:\n", "  loadBalancer: {pool: 192.168.100.10-192.168.100.20}\n  externalIPs: [203.0.113.0/24]\n  clients:\n", 1)
	lab := newLab(t, doc, "lb", topology.CNIFlannelVXLAN)
	plan, err := PlanLab(lab)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	hostAddrs := map[netip.Addr]bool{}
	for _, h := range plan.Hosts {
		hostAddrs[h.IP.Addr()] = true
	}
	for _, s := range plan.Steps {
		r, ok := s.(AddRoute)
		if !ok || r.NS != plan.Router.Namespace {
			continue
		}
		if !r.Dst.IsValid() || !hostAddrs[r.Gw] {
			t.Errorf("router route %q leads out of the lab", r.Command())
		}
		got = append(got, r.Command())
	}
	ns := plan.Router.Namespace
	want := []string{
		"ip -n " + ns + " route add 10.254.0.0/16 via 192.168.16.73",
		"ip -n " + ns + " route add 192.168.100.10/31 via 192.168.16.73",
		"ip -n " + ns + " route add 192.168.100.12/30 via 192.168.16.73",
		"ip -n " + ns + " route add 192.168.100.16/30 via 192.168.16.73",
		"ip -n " + ns + " route add 192.168.100.20/32 via 192.168.16.73",
		"ip -n " + ns + " route add 203.0.113.0/24 via 192.168.16.73",
	}
	if !slices.Equal(got, want) {
		t.Errorf("router routes:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	plain, err := PlanLab(newLab(t, labYAML, "lb", topology.CNIFlannelVXLAN))
	if err != nil {
		t.Fatal(err)
	}
	if len(plan.Steps) != len(plain.Steps)+5 {
		t.Errorf("the pool and the block add %d steps, want 5", len(plan.Steps)-len(plain.Steps))
	}
}
