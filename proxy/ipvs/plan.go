package ipvs

import (
	"fmt"
	"net/netip"
	"strings"

	corev1 "k8s.io/api/core/v1"

	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// OpKind is what an Op does.
type OpKind int

// The kinds of Op, in the order a Plan runs them.
const (
	OpCreateDummy OpKind = iota
	OpCreateSet
	OpAddVirtualServer
	OpUpdateVirtualServer
	OpAddRealServer
	// OpUpdateRealServer changes a destination's weight: to 0 to drain
	// one that should go away, back to 1 for one that is wanted again.
	OpUpdateRealServer
	OpDeleteRealServer
	OpBindAddress
	OpDelEntry
	OpAddEntry
	OpEnsureJump
	OpRestore
	OpUnbindAddress
	OpDeleteVirtualServer
)

// Op is one change to the kernel. Only the fields its Kind needs are set.
type Op struct {
	Kind OpKind
	VS   kernel.VirtualServer
	RS   kernel.RealServer
	Addr netip.Addr
	// Set and SetType name the ipset; Entry is the member.
	Set     string
	SetType kernel.SetType
	Entry   string
	Jump    JumpRule
	// Payload is the iptables-restore input of OpRestore.
	Payload []byte
	// Why explains an op that is not plain reconciliation ("draining: 2
	// connections").
	Why string
	// Family is the proxier's IP family ("" is IPv4): the family of an
	// OpCreateSet's set and of the tables of OpEnsureJump and OpRestore
	// (ip6tables for IPv6).
	Family corev1.IPFamily
}

// String is the command a person would run for the same change.
func (o Op) String() string {
	s := o.command()
	if o.Why != "" {
		s += "  # " + o.Why
	}
	return s
}

func (o Op) command() string {
	switch o.Kind {
	case OpCreateDummy:
		return "ip link add " + DummyDevice + " type dummy"
	case OpCreateSet:
		if o.SetType == kernel.BitmapPort {
			return "ipset create " + o.Set + " bitmap:port range 0-65535 -exist"
		}
		return "ipset create " + o.Set + " " + string(o.SetType) + " family " + string(setFamily(o.Family)) + " hashsize 1024 maxelem 65536 -exist"
	case OpAddVirtualServer:
		return "ipvsadm -A " + o.VS.Target() + " " + o.VS.Options()
	case OpUpdateVirtualServer:
		return "ipvsadm -E " + o.VS.Target() + " " + o.VS.Options()
	case OpAddRealServer:
		return "ipvsadm -a " + o.VS.Target() + " " + o.RS.Describe()
	case OpUpdateRealServer:
		return "ipvsadm -e " + o.VS.Target() + " " + o.RS.Describe()
	case OpDeleteRealServer:
		return "ipvsadm -d " + o.VS.Target() + " -r " + o.RS.Key()
	case OpBindAddress:
		return "ip addr add " + hostPrefix(o.Addr) + " dev " + DummyDevice
	case OpDelEntry:
		return "ipset del " + o.Set + " " + o.Entry
	case OpAddEntry:
		return "ipset add " + o.Set + " " + o.Entry + " -exist"
	case OpEnsureJump:
		ipt := iptablesCommand(o.Family)
		return ipt + " -t " + o.Jump.Table + " -C " + o.Jump.Chain + " " + strings.Join(quoteArgs(o.Jump.Args()), " ") +
			" || " + ipt + " -t " + o.Jump.Table + " -I " + o.Jump.Chain + " ..."
	case OpRestore:
		return fmt.Sprintf("%s-restore --noflush --counters  # %d bytes", iptablesCommand(o.Family), len(o.Payload))
	case OpUnbindAddress:
		return "ip addr del " + hostPrefix(o.Addr) + " dev " + DummyDevice
	case OpDeleteVirtualServer:
		return "ipvsadm -D " + o.VS.Target()
	}
	return fmt.Sprintf("op %d", o.Kind)
}

// hostPrefix is a /32 or /128 of a: "10.96.0.10/32".
func hostPrefix(a netip.Addr) string { return netip.PrefixFrom(a, a.BitLen()).String() }

// Plan is an ordered list of Ops.
type Plan []Op

// String lists the ops, one command a line.
func (p Plan) String() string {
	var b strings.Builder
	for _, o := range p {
		b.WriteString(o.String())
		b.WriteByte('\n')
	}
	return b.String()
}

// Count returns how many ops of kind k the plan has.
func (p Plan) Count(k OpKind) int {
	n := 0
	for _, o := range p {
		if o.Kind == k {
			n++
		}
	}
	return n
}
