package ui

import (
	"encoding/json"
	"testing"

	"github.com/svclab/svclab/labs/netns/topology"
)

// TestChainsOfEachFamily: the chains read from ip6tables-save are marked
// IPv6 in the page's JSON; those of iptables-save carry no family, so an
// IPv4 lab's state reads as before dual-stack labs.
func TestChainsOfEachFamily(t *testing.T) {
	read := func() []Chain { return []Chain{{Name: "KUBE-SERVICES", Rules: []Rule{}}} }
	for _, c := range []struct {
		fam  topology.IPFamily
		want string
	}{
		{topology.IPFamilyIPv4, `[{"name":"KUBE-SERVICES","rules":[]}]`},
		{topology.IPFamilyIPv6, `[{"name":"KUBE-SERVICES","family":"IPv6","rules":[]}]`},
	} {
		data, err := json.Marshal(inFamily(read(), c.fam))
		if err != nil {
			t.Fatal(err)
		}
		if string(data) != c.want {
			t.Errorf("%s chains = %s, want %s", c.fam, data, c.want)
		}
	}
}
