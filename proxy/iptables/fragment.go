package iptables

import "github.com/svclab/svclab/proxy/model"

// fragment is everything one service port contributes to a payload,
// rendered once and reused until the service port changes.
//
// The four sections are kept in one allocation:
//
//	filterRules   its rules in the filter table's shared chains
//	natShared     its rules in nat KUBE-SERVICES and KUBE-NODEPORTS
//	natChainDecls ":CHAIN - [0:0]" lines for its own nat chains
//	natChainRules the rules of its own chains (SVC, SVL, EXT, FW, SEP)
//
// A partial sync writes natChainDecls and natChainRules only of the changed
// service ports, and filterRules and natShared of every service port (those
// chains are rewritten whole) when any of them changed (shared.go).
type fragment struct {
	sp *model.ServicePort
	// largeCluster records the comment mode it was rendered in.
	largeCluster bool

	buf                           []byte
	filterEnd, sharedEnd, declEnd int
	filterLines, sharedLines      int
	chainRuleLines                int

	// chains are the nat chains it owns, in declaration order.
	chains []string
}

func (f *fragment) filterRules() []byte   { return f.buf[:f.filterEnd] }
func (f *fragment) natShared() []byte     { return f.buf[f.filterEnd:f.sharedEnd] }
func (f *fragment) natChainDecls() []byte { return f.buf[f.sharedEnd:f.declEnd] }
func (f *fragment) natChainRules() []byte { return f.buf[f.declEnd:] }

// removedChains lists the chains of old that new no longer owns.
func removedChains(old, new *fragment) []string {
	if old == nil {
		return nil
	}
	if new == nil {
		return old.chains
	}
	var out []string
	if len(new.chains) > 32 {
		kept := make(map[string]struct{}, len(new.chains))
		for _, c := range new.chains {
			kept[c] = struct{}{}
		}
		for _, c := range old.chains {
			if _, ok := kept[c]; !ok {
				out = append(out, c)
			}
		}
		return out
	}
	for _, c := range old.chains {
		if !containsChain(new.chains, c) {
			out = append(out, c)
		}
	}
	return out
}

func containsChain(chains []string, c string) bool {
	for _, x := range chains {
		if x == c {
			return true
		}
	}
	return false
}
