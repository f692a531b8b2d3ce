package ipvs

import (
	"fmt"
	"net/netip"
	"strings"

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
		return "ipset create " + o.Set + " " + string(o.SetType) + " family inet hashsize 1024 maxelem 65536 -exist"
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
		return "ip addr add " + o.Addr.String() + "/32 dev " + DummyDevice
	case OpDelEntry:
		return "ipset del " + o.Set + " " + o.Entry
	case OpAddEntry:
		return "ipset add " + o.Set + " " + o.Entry + " -exist"
	case OpEnsureJump:
		return "iptables -t " + o.Jump.Table + " -C " + o.Jump.Chain + " " + strings.Join(quoteArgs(o.Jump.Args()), " ") +
			" || iptables -t " + o.Jump.Table + " -I " + o.Jump.Chain + " ..."
	case OpRestore:
		return fmt.Sprintf("iptables-restore --noflush --counters  # %d bytes", len(o.Payload))
	case OpUnbindAddress:
		return "ip addr del " + o.Addr.String() + "/32 dev " + DummyDevice
	case OpDeleteVirtualServer:
		return "ipvsadm -D " + o.VS.Target()
	}
	return fmt.Sprintf("op %d", o.Kind)
}

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
