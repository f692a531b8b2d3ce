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
// removed, as upstream returns early there.
func Apply(k kernel.Interface, ipt iptkernel.Runner, plan Plan) (Applied, error) {
	var res Applied
	var errs []error
	failedVS := map[string]bool{}
	for _, op := range plan {
		if failedVS[op.VS.Key()] && (op.Kind == OpAddRealServer || op.Kind == OpUpdateRealServer || op.Kind == OpDeleteRealServer) {
			continue
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
