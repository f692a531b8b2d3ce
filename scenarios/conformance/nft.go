package conformance

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/netip"
)

// The nft* types are the parts of `nft -j list table ip kube-proxy` the
// checks read, in libnftables' JSON schema (libnftables-json(5)): a list
// of objects, each a table, chain, set, map or rule. Everything else in
// the output is ignored.
type nftOutput struct {
	Nftables []nftObject `json:"nftables"`
}

type nftObject struct {
	Chain *nftChain `json:"chain"`
	Rule  *nftRule  `json:"rule"`
}

type nftChain struct {
	Name string `json:"name"`
}

// nftRule is one rule: its chain and its statements, in order (raw keeps
// them as listed, for messages).
type nftRule struct {
	Chain string    `json:"chain"`
	Expr  []nftExpr `json:"expr"`
	raw   json.RawMessage
}

func (r *nftRule) UnmarshalJSON(data []byte) error {
	type fields nftRule // without this method
	var f fields
	if err := json.Unmarshal(data, &f); err != nil {
		return err
	}
	var raw struct {
		Expr json.RawMessage `json:"expr"`
	}
	if err := json.Unmarshal(data, &raw); err != nil {
		return err
	}
	*r = nftRule(f)
	r.raw = raw.Expr
	return nil
}

// nftExpr is one statement of a rule; the ones read here are a verdict map
// (`numgen random mod 2 vmap { 0 : goto endpoint-…, … }`) and a DNAT
// (`dnat to 10.244.1.5:8080`, or `dnat ip to numgen random mod 2 map
// { 0 : 10.244.1.5 . 8080, … }`).
type nftExpr struct {
	VMap *nftMap `json:"vmap"`
	DNAT *nftNAT `json:"dnat"`
	// Match is a comparison (`ip saddr != 10.244.0.0/16`).
	Match *nftMatch `json:"match"`
	// Mangle sets a key (`meta mark set meta mark or 0x4000`).
	Mangle *struct {
		Key struct {
			Meta *struct{ Key string } `json:"meta"`
		} `json:"key"`
	} `json:"mangle"`
	// Jump and Goto are verdicts to a chain.
	Jump *struct{ Target string } `json:"jump"`
	Goto *struct{ Target string } `json:"goto"`
}

// nftMatch is `LEFT OP RIGHT`: left a packet field (payload protocol and
// field, or a meta key), right a value (a string, a number, a prefix).
type nftMatch struct {
	Op    string          `json:"op"`
	Left  json.RawMessage `json:"left"`
	Right json.RawMessage `json:"right"`
}

// String is the match as nft lists it: "ip saddr != 10.244.0.0/16",
// "iifname != veth*", "ip daddr == @cluster-ips".
func (m *nftMatch) String() string {
	return m.left() + " " + m.Op + " " + m.right()
}

// left is "PROTOCOL FIELD" of a payload, or a meta key ("iifname").
func (m *nftMatch) left() string {
	var l struct {
		Payload *struct{ Protocol, Field string } `json:"payload"`
		Meta    *struct{ Key string }             `json:"meta"`
	}
	switch {
	case json.Unmarshal(m.Left, &l) != nil:
	case l.Payload != nil:
		return l.Payload.Protocol + " " + l.Payload.Field
	case l.Meta != nil:
		return l.Meta.Key
	}
	return string(m.Left)
}

// right is a string or number as it is, a prefix as ADDR/LEN.
func (m *nftMatch) right() string {
	var str string
	if json.Unmarshal(m.Right, &str) == nil {
		return str
	}
	var prefix struct {
		Prefix *struct {
			Addr string `json:"addr"`
			Len  int    `json:"len"`
		} `json:"prefix"`
	}
	if json.Unmarshal(m.Right, &prefix) == nil && prefix.Prefix != nil {
		return fmt.Sprintf("%s/%d", prefix.Prefix.Addr, prefix.Prefix.Len)
	}
	return string(m.Right)
}

// marksForMasquerade says whether the rule marks the packet for
// masquerade: it sets the mark (kube-proxy 1.36's services chain) or
// jumps to mark-for-masquerade.
func (r *nftRule) marksForMasquerade() bool {
	for _, e := range r.Expr {
		switch {
		case e.Mangle != nil && e.Mangle.Key.Meta != nil && e.Mangle.Key.Meta.Key == "mark":
			return true
		case e.Jump != nil && e.Jump.Target == "mark-for-masquerade", e.Goto != nil && e.Goto.Target == "mark-for-masquerade":
			return true
		}
	}
	return false
}

// matches are the rule's comparisons, as nft lists them.
func (r *nftRule) matches() []string {
	var out []string
	for _, e := range r.Expr {
		if e.Match != nil {
			out = append(out, e.Match.String())
		}
	}
	return out
}

// nftMap is a lookup of key in a map: {"key": …, "data": {"set": [[key,
// value], …]}} for an anonymous map, {"key": …, "data": "@name"} for a
// named one (whose elements are not read here: Elements is empty).
type nftMap struct {
	Key  nftKey     `json:"key"`
	Data nftMapData `json:"data"`
}

type nftMapData struct {
	Elements []nftMapping
}

func (d *nftMapData) UnmarshalJSON(data []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte(`"`)) {
		return nil // "@name"
	}
	var anonymous struct {
		Set []nftMapping `json:"set"`
	}
	if err := json.Unmarshal(data, &anonymous); err != nil {
		return err
	}
	d.Elements = anonymous.Set
	return nil
}

type nftKey struct {
	Numgen *nftNumgen `json:"numgen"`
}

// nftNumgen is `numgen <mode> mod <mod>`.
type nftNumgen struct {
	Mode string `json:"mode"`
	Mod  int    `json:"mod"`
}

// nftMapping is one [key, value] element of an anonymous map. The value is
// a verdict (goto or jump to Chain) or, in a DNAT map, an address and port
// (the concatenation `IP . PORT`).
type nftMapping struct {
	Chain string
	To    netip.AddrPort
}

func (m *nftMapping) UnmarshalJSON(data []byte) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(data, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return fmt.Errorf("map element %s: want [key, value]", data)
	}
	var value struct {
		Goto   *struct{ Target string } `json:"goto"`
		Jump   *struct{ Target string } `json:"jump"`
		Concat []json.RawMessage        `json:"concat"`
	}
	if bytes.HasPrefix(bytes.TrimSpace(pair[1]), []byte("{")) {
		if err := json.Unmarshal(pair[1], &value); err != nil {
			return err
		}
	}
	switch {
	case value.Goto != nil:
		m.Chain = value.Goto.Target
	case value.Jump != nil:
		m.Chain = value.Jump.Target
	case len(value.Concat) == 2:
		var addr netip.Addr
		var port uint16
		if err := json.Unmarshal(value.Concat[0], &addr); err != nil {
			return fmt.Errorf("map element %s: %w", data, err)
		}
		if err := json.Unmarshal(value.Concat[1], &port); err != nil {
			return fmt.Errorf("map element %s: %w", data, err)
		}
		m.To = netip.AddrPortFrom(addr, port)
	}
	return nil
}

// nftNAT is a dnat statement: addr is an address, or a map lookup whose
// values are address . port; port, if given, is the port.
type nftNAT struct {
	Addr nftNATAddr `json:"addr"`
	Port uint16     `json:"port"`
}

// nftNATAddr is the address of a dnat statement: a literal address (Addr)
// or a map lookup (Map).
type nftNATAddr struct {
	Addr netip.Addr
	Map  *nftMap
}

func (a *nftNATAddr) UnmarshalJSON(data []byte) error {
	if bytes.HasPrefix(bytes.TrimSpace(data), []byte(`"`)) {
		return json.Unmarshal(data, &a.Addr)
	}
	var lookup struct {
		Map *nftMap `json:"map"`
	}
	if err := json.Unmarshal(data, &lookup); err != nil {
		return err
	}
	a.Map = lookup.Map
	return nil
}

// parseNFT decodes `nft -j list table …` output.
func parseNFT(out string) (*nftOutput, error) {
	var o nftOutput
	if err := json.Unmarshal([]byte(out), &o); err != nil {
		return nil, fmt.Errorf("not the JSON output of nft -j: %w", err)
	}
	return &o, nil
}

// chains are the names of the table's chains, in listing order.
func (o *nftOutput) chains() []string {
	var out []string
	for _, obj := range o.Nftables {
		if obj.Chain != nil {
			out = append(out, obj.Chain.Name)
		}
	}
	return out
}

// rules are the rules of chain, in order.
func (o *nftOutput) rules(chain string) []*nftRule {
	var out []*nftRule
	for _, obj := range o.Nftables {
		if obj.Rule != nil && obj.Rule.Chain == chain {
			out = append(out, obj.Rule)
		}
	}
	return out
}

// numgenSpread is the map of a rule that picks its target by `numgen random
// mod n`: a verdict map of chains, or a DNAT map of addresses.
func (r *nftRule) numgenSpread(n int) *nftMap {
	for _, e := range r.Expr {
		var m *nftMap
		switch {
		case e.VMap != nil:
			m = e.VMap
		case e.DNAT != nil:
			m = e.DNAT.Addr.Map
		}
		if m != nil && m.Key.Numgen != nil && m.Key.Numgen.Mode == "random" && m.Key.Numgen.Mod == n {
			return m
		}
	}
	return nil
}

// dnatTo are the literal destinations of the rule's dnat statements.
func (r *nftRule) dnatTo() []netip.AddrPort {
	var out []netip.AddrPort
	for _, e := range r.Expr {
		if e.DNAT != nil && e.DNAT.Addr.Addr.IsValid() {
			out = append(out, netip.AddrPortFrom(e.DNAT.Addr.Addr, e.DNAT.Port))
		}
	}
	return out
}

// String is the rule's statements as nft -j listed them, for messages.
func (r *nftRule) String() string {
	return string(r.raw)
}
