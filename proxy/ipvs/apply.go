package ipvs

import (
	"errors"
	"fmt"

	iptkernel "github.com/svclab/svclab/proxy/iptables/kernel"
	"github.com/svclab/svclab/proxy/ipvs/kernel"
)

// Applied says what Apply did.
type Applied struct {
	// Ops is how many ops succeeded.
	Ops int
	// Restored is the size of the iptables payload written (0 when the
	// plan had no restore or it failed).
	Restored int
}

// Apply runs plan against the kernel. Like upstream's sync it carries on
// after a failed op, so one bad service does not hold up the others, and
// returns every failure joined, each naming its command; the real servers
// of a virtual server that could not be created are skipped. A failed
// iptables restore ends the run before addresses and virtual servers are
// removed, as upstream returns early there. A run of OpEnsureJump ops is
// ensured together when ipt can (iptkernel.JumpEnsurer: one iptables-save
// per table and one restore of what is missing, where upstream runs
// `iptables -N`, `-C` and `-I` for each jump: ~30 execs on a new node,
// each reading the whole table, half a minute of a proxy's start in an
// emulated VM).
func Apply(k kernel.Interface, ipt iptkernel.Runner, plan Plan) (Applied, error) {
	var res Applied
	var errs []error
	failedVS := map[string]bool{}
	for i := 0; i < len(plan); i++ {
		op := plan[i]
		if failedVS[op.VS.Key()] && (op.Kind == OpAddRealServer || op.Kind == OpUpdateRealServer || op.Kind == OpDeleteRealServer) {
			continue
		}
		if jumps := leadingJumps(plan[i:]); len(jumps) > 1 {
			if je, ok := ipt.(iptkernel.JumpEnsurer); ok {
				if _, err := je.EnsureJumps(jumps); err != nil {
					return res, errors.Join(append(errs, fmt.Errorf("%s jumps into the ipvs mode's chains: %w", iptablesCommand(op.Family), err))...)
				}
				res.Ops += len(jumps)
				i += len(jumps) - 1
				continue
			}
		}
		err := apply(k, ipt, op)
		if err == nil {
			res.Ops++
			if op.Kind == OpRestore {
				res.Restored = len(op.Payload)
			}
			continue
		}
		errs = append(errs, err)
		switch op.Kind {
		case OpAddVirtualServer:
			failedVS[op.VS.Key()] = true
		case OpRestore, OpEnsureJump, OpCreateDummy:
			return res, errors.Join(errs...)
		}
	}
	return res, errors.Join(errs...)
}

// leadingJumps are the jump rules of the OpEnsureJump ops plan starts
// with, of one family (one Runner's tables).
func leadingJumps(plan Plan) []iptkernel.JumpRule {
	var jumps []iptkernel.JumpRule
	for _, op := range plan {
		if op.Kind != OpEnsureJump || op.Family != plan[0].Family {
			break
		}
		jumps = append(jumps, op.Jump)
	}
	return jumps
}

func apply(k kernel.Interface, ipt iptkernel.Runner, op Op) error {
	switch op.Kind {
	case OpCreateDummy:
		return k.EnsureDummy(DummyDevice)
	case OpCreateSet:
		return k.CreateSet(op.Set, op.SetType, setFamily(op.Family))
	case OpAddVirtualServer:
		return k.AddVirtualServer(op.VS)
	case OpUpdateVirtualServer:
		return k.UpdateVirtualServer(op.VS)
	case OpAddRealServer:
		return k.AddRealServer(op.VS, op.RS)
	case OpUpdateRealServer:
		return k.UpdateRealServer(op.VS, op.RS)
	case OpDeleteRealServer:
		return k.DeleteRealServer(op.VS, op.RS)
	case OpBindAddress:
		return k.AddAddress(DummyDevice, op.Addr)
	case OpDelEntry:
		return k.DelEntry(op.Set, op.SetType, op.Entry)
	case OpAddEntry:
		return k.AddEntry(op.Set, op.SetType, op.Entry)
	case OpEnsureJump:
		return ipt.EnsureJump(op.Jump)
	case OpRestore:
		if err := ipt.Restore(op.Payload); err != nil {
			return fmt.Errorf("iptables-restore of the ipvs mode's rules: %w", err)
		}
		return nil
	case OpUnbindAddress:
		return k.DelAddress(DummyDevice, op.Addr)
	case OpDeleteVirtualServer:
		return k.DeleteVirtualServer(op.VS)
	}
	return fmt.Errorf("unknown op %d", op.Kind)
}
