package iptablestest

import (
	"fmt"
	"slices"

	"github.com/svclab/svclab/internal/iptsave"
)

// Value is an option's value, possibly negated with "!".
type Value struct {
	Value   string
	Negated bool
}

// Rule is one parsed rule. Pointer fields are nil when the rule does not
// use that match.
type Rule struct {
	// Chain is the chain the rule is in.
	Chain string
	// Args are the arguments after "-A CHAIN", quotes removed.
	Args []string

	Protocol        *Value // -p
	Source          *Value // -s
	Destination     *Value // -d
	InInterface     *Value // -i
	OutInterface    *Value // -o
	SourceType      *Value // -m addrtype --src-type
	DestinationType *Value // -m addrtype --dst-type
	SourcePort      *Value // --sport
	DestinationPort *Value // --dport
	Mark            *Value // -m mark --mark VALUE[/MASK]
	CTState         *Value // -m conntrack --ctstate
	Comment         string // -m comment --comment
	// Probability is the -m statistic --mode random --probability value.
	Probability string
	// RecentName, RecentCheck and RecentSet describe -m recent.
	RecentName  string
	RecentCheck bool
	RecentSet   bool
	RecentSecs  string
	// Modules are the -m modules in order.
	Modules []string

	// Jump is the -j target ("" for a rule without one, which only counts
	// packets).
	Jump string
	// ToDestination is DNAT's --to-destination.
	ToDestination string
	// OrMark, XorMark and SetXMark are the MARK target's options.
	OrMark, XorMark, SetXMark string
	RandomFully               bool
}

// String gives the rule back as "-A CHAIN args", quoting arguments as
// iptables-save does (iptsave.Join).
func (r *Rule) String() string {
	return iptsave.Rule{Chain: r.Chain, Spec: iptsave.Join(r.Args)}.String()
}

// Equal reports whether two rules have the same chain and arguments.
func (r *Rule) Equal(o *Rule) bool {
	return r.Chain == o.Chain && slices.Equal(r.Args, o.Args)
}

// ParseRule parses the arguments of a rule (everything after "-A CHAIN").
// Unknown options are an error, so tests notice rules this package cannot
// interpret.
func ParseRule(chain string, args []string) (*Rule, error) {
	r := &Rule{Chain: chain, Args: args}
	negate := false
	take := func(i *int, opt string) (string, error) {
		if *i+1 >= len(args) {
			return "", fmt.Errorf("option %s needs a value", opt)
		}
		*i++
		return args[*i], nil
	}
	for i := 0; i < len(args); i++ {
		opt := args[i]
		if opt == "!" {
			negate = true
			continue
		}
		var dst **Value
		var str *string
		switch opt {
		case "-p", "--protocol":
			dst = &r.Protocol
		case "-s", "--source", "--src":
			dst = &r.Source
		case "-d", "--destination", "--dst":
			dst = &r.Destination
		case "-i", "--in-interface":
			dst = &r.InInterface
		case "-o", "--out-interface":
			dst = &r.OutInterface
		case "--src-type":
			dst = &r.SourceType
		case "--dst-type":
			dst = &r.DestinationType
		case "--sport", "--source-port":
			dst = &r.SourcePort
		case "--dport", "--destination-port":
			dst = &r.DestinationPort
		case "--mark":
			dst = &r.Mark
		case "--ctstate":
			dst = &r.CTState
		case "-m", "--match":
			v, err := take(&i, opt)
			if err != nil {
				return nil, err
			}
			r.Modules = append(r.Modules, v)
		case "--comment":
			str = &r.Comment
		case "--mode":
			v, err := take(&i, opt)
			if err != nil {
				return nil, err
			}
			if v != "random" {
				return nil, fmt.Errorf("statistic mode %q: only random is understood", v)
			}
		case "--probability":
			str = &r.Probability
		case "--name":
			str = &r.RecentName
		case "--rcheck":
			r.RecentCheck = true
		case "--set":
			r.RecentSet = true
		case "--reap", "--rsource", "--rdest":
		case "--mask", "--reject-with":
			var ignored string
			str = &ignored
		case "--seconds":
			str = &r.RecentSecs
		case "--nfacct-name":
			var ignored string
			str = &ignored
		case "-j", "--jump":
			str = &r.Jump
		case "--to-destination":
			str = &r.ToDestination
		case "--or-mark":
			str = &r.OrMark
		case "--xor-mark":
			str = &r.XorMark
		case "--set-xmark":
			str = &r.SetXMark
		case "--random-fully":
			r.RandomFully = true
		default:
			return nil, fmt.Errorf("option %q: not understood", opt)
		}
		if dst != nil || str != nil {
			v, err := take(&i, opt)
			if err != nil {
				return nil, err
			}
			if dst != nil {
				*dst = &Value{Value: v, Negated: negate}
			} else {
				*str = v
			}
		}
		negate = false
	}
	return r, nil
}
