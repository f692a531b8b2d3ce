package kernel

import (
	"errors"
	"os/exec"
)

// EnsureChain creates chain in table unless it exists (`iptables -N`).
func (r *ExecRunner) EnsureChain(table, chain string) error { return r.ensureChain(table, chain) }

// ChainExists reports whether table holds chain (`iptables -S chain`,
// which fails with status 1 when it does not).
func (r *ExecRunner) ChainExists(table, chain string) (bool, error) {
	_, err := r.iptables("-t", table, "-S", chain)
	if err == nil {
		return true, nil
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) && exitErr.ExitCode() == 1 {
		return false, nil
	}
	return false, err
}
