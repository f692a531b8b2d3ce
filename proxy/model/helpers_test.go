package model

import (
	"net/netip"
)

func addr(s string) netip.Addr { return netip.MustParseAddr(s) }

func endpointStrings(eps []Endpoint) []string {
	out := []string{}
	for _, e := range eps {
		out = append(out, e.String())
	}
	return out
}
