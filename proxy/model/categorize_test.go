package model

import (
	"slices"
	"testing"
)

func readyEP(ip string, local bool) Endpoint {
	return Endpoint{IP: addr(ip), Port: 80, Ready: true, Serving: true, IsLocal: local}
}

func terminatingEP(ip string, local bool) Endpoint {
	return Endpoint{IP: addr(ip), Port: 80, Serving: true, Terminating: true, IsLocal: local}
}

func TestCategorizeEndpoints(t *testing.T) {
	cases := []struct {
		name                      string
		sp                        ServicePort
		cluster, local, reachable []string
		hasAny                    bool
	}{{
		name:      "cluster policy uses ready endpoints",
		sp:        ServicePort{Endpoints: []Endpoint{readyEP("10.0.0.1", false), terminatingEP("10.0.0.2", false)}},
		cluster:   []string{"10.0.0.1:80"},
		reachable: []string{"10.0.0.1:80"},
		hasAny:    true,
	}, {
		name:      "cluster policy falls back to serving terminating endpoints",
		sp:        ServicePort{Endpoints: []Endpoint{terminatingEP("10.0.0.2", false), {IP: addr("10.0.0.3"), Port: 80, Terminating: true}}},
		cluster:   []string{"10.0.0.2:80"},
		reachable: []string{"10.0.0.2:80"},
		hasAny:    true,
	}, {
		name:   "no usable endpoints",
		sp:     ServicePort{Endpoints: []Endpoint{{IP: addr("10.0.0.3"), Port: 80}}},
		hasAny: false,
	}, {
		name:      "internal policy local keeps only local endpoints",
		sp:        ServicePort{InternalPolicyLocal: true, Endpoints: []Endpoint{readyEP("10.0.0.1", false), readyEP("10.0.0.2", true)}},
		local:     []string{"10.0.0.2:80"},
		reachable: []string{"10.0.0.2:80"},
		hasAny:    true,
	}, {
		name:   "internal policy local without local endpoints still has endpoints elsewhere",
		sp:     ServicePort{InternalPolicyLocal: true, Endpoints: []Endpoint{readyEP("10.0.0.1", false)}},
		hasAny: true,
	}, {
		name:      "external policy local needs both lists",
		sp:        ServicePort{NodePort: 30080, ExternalPolicyLocal: true, Endpoints: []Endpoint{readyEP("10.0.0.1", false), readyEP("10.0.0.2", true)}},
		cluster:   []string{"10.0.0.1:80", "10.0.0.2:80"},
		local:     []string{"10.0.0.2:80"},
		reachable: []string{"10.0.0.1:80", "10.0.0.2:80"},
		hasAny:    true,
	}, {
		name: "local terminating endpoint is merged into reachable",
		sp: ServicePort{NodePort: 30080, ExternalPolicyLocal: true, Endpoints: []Endpoint{
			readyEP("10.0.0.1", false), terminatingEP("10.0.0.2", true),
		}},
		cluster:   []string{"10.0.0.1:80"},
		local:     []string{"10.0.0.2:80"},
		reachable: []string{"10.0.0.1:80", "10.0.0.2:80"},
		hasAny:    true,
	}}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cluster, local, reachable, hasAny := CategorizeEndpoints(&c.sp)
			check := func(what string, got []Endpoint, want []string) {
				t.Helper()
				if want == nil {
					want = []string{}
				}
				if g := endpointStrings(got); !slices.Equal(g, want) {
					t.Errorf("%s = %v, want %v", what, g, want)
				}
			}
			check("cluster", cluster, c.cluster)
			check("local", local, c.local)
			check("reachable", reachable, c.reachable)
			if hasAny != c.hasAny {
				t.Errorf("hasAny = %v, want %v", hasAny, c.hasAny)
			}
		})
	}
}
