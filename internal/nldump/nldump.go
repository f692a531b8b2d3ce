// Package nldump repeats a netlink dump that the kernel reports as
// interrupted.
//
// A dump (the addresses, links, neighbours or routes of a namespace) that
// runs while the table it reads changes ends with NLM_F_DUMP_INTR, and
// vishvananda/netlink (since v1.2) returns what it read together with
// netlink.ErrDumpInterrupted: the result may miss entries or hold some
// twice. The kernel's answer is to dump again (iproute2 says "Dump was
// interrupted and may be inconsistent"); Retry does, a bounded number of
// times, as upstream kube-proxy retries its interrupted calls
// (proxyutil.MaxAttemptsEINTR, 5 steps). Pods attaching while a proxy reads
// its node's addresses, or a lab waiting for DAD while another device comes
// up in the same namespace, are where it happens.
package nldump

import (
	"errors"

	"github.com/vishvananda/netlink"
)

// Attempts is how many times Retry runs an interrupted dump.
const Attempts = 5

// Retry runs dump until it is not interrupted, at most Attempts times, and
// returns its last result: a dump that was interrupted every time returns
// its error (netlink.ErrDumpInterrupted) with what it read last.
func Retry[T any](dump func() (T, error)) (T, error) {
	var (
		v   T
		err error
	)
	for range Attempts {
		v, err = dump()
		if !errors.Is(err, netlink.ErrDumpInterrupted) {
			return v, err
		}
	}
	return v, err
}
