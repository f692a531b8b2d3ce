package network

import (
	"fmt"
	"strconv"
	"strings"
)

// SetAlias sets a link's alias (svclab tags each namespace's lo this way).
//
//	ip -n <NS> link set dev <Link> alias '<Alias>'
type SetAlias struct {
	NS, Link, Alias string
}

func (s SetAlias) Namespace() string { return s.NS }
func (s SetAlias) Command() string {
	return fmt.Sprintf("ip -n %s link set dev %s alias %s", s.NS, s.Link, shellQuote(s.Alias))
}

func (s SetAlias) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	return c.nl.LinkSetAlias(l, s.Alias)
}

// LinkUp sets a link administratively up.
//
//	ip -n <NS> link set dev <Link> up
type LinkUp struct {
	NS, Link string
}

func (s LinkUp) Namespace() string { return s.NS }
func (s LinkUp) Command() string   { return fmt.Sprintf("ip -n %s link set dev %s up", s.NS, s.Link) }

func (s LinkUp) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	return c.nl.LinkSetUp(l)
}

// SetMaster makes a link a port of a bridge.
//
//	ip -n <NS> link set dev <Link> master <Master>
type SetMaster struct {
	NS, Link, Master string
}

func (s SetMaster) Namespace() string { return s.NS }
func (s SetMaster) Command() string {
	return fmt.Sprintf("ip -n %s link set dev %s master %s", s.NS, s.Link, s.Master)
}

func (s SetMaster) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	_, m, err := x.link(s.NS, s.Master)
	if err != nil {
		return err
	}
	return c.nl.LinkSetMaster(l, m)
}

// SetHairpin turns on hairpin mode on a bridge port, so that a frame may
// leave by the port it came in (a pod reaching itself through a Service).
//
//	bridge -n <NS> link set dev <Link> hairpin on
type SetHairpin struct {
	NS, Link string
}

func (s SetHairpin) Namespace() string { return s.NS }
func (s SetHairpin) Command() string {
	return fmt.Sprintf("bridge -n %s link set dev %s hairpin on", s.NS, s.Link)
}

func (s SetHairpin) apply(x *executor) error {
	c, l, err := x.link(s.NS, s.Link)
	if err != nil {
		return err
	}
	return c.nl.LinkSetHairpin(l, true)
}

// shellQuote quotes s for a POSIX shell when it needs quoting.
func shellQuote(s string) string {
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '.' || r == '/' || r == '_' || r == '=' || r == ':') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	if s == "" {
		return "''"
	}
	return s
}

func mtuArg(mtu int) string {
	if mtu == 0 {
		return ""
	}
	return " mtu " + strconv.Itoa(mtu)
}
