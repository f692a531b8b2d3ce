package traffic

import (
	"context"
	"errors"
	"net"
	"os"
	"syscall"
)

// FailureKind classifies why a connection did not yield a backend name.
type FailureKind string

// The failure kinds, from the first that matches.
const (
	// FailureRefused: the SYN was answered by a RST or an ICMP port
	// unreachable (ECONNREFUSED), e.g. kube-proxy's REJECT for a Service
	// without endpoints, or nothing listening.
	FailureRefused FailureKind = "refused"
	// FailureTimeout: no answer within the per-connection timeout (or the
	// overall deadline cut the connection short): a DROP, a black hole, a
	// backend that never responds.
	FailureTimeout FailureKind = "timeout"
	// FailureReset: the connection was established and then reset
	// (ECONNRESET, EPIPE).
	FailureReset FailureKind = "reset"
	// FailureUnreachable: ICMP host/network unreachable (EHOSTUNREACH,
	// ENETUNREACH), e.g. no route to the address.
	FailureUnreachable FailureKind = "unreachable"
	// FailureOther: anything else: a malformed or non-200 HTTP answer, the
	// peer closing before answering, a local error.
	FailureOther FailureKind = "other"
)

// FailureKinds lists every kind, in the order reports show them.
var FailureKinds = []FailureKind{FailureRefused, FailureTimeout, FailureReset, FailureUnreachable, FailureOther}

// Classify returns the FailureKind of an error from dialling, writing to or
// reading from a TCP connection.
func Classify(err error) FailureKind {
	var netErr net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return FailureRefused
	case errors.Is(err, os.ErrDeadlineExceeded), errors.Is(err, context.DeadlineExceeded),
		errors.Is(err, syscall.ETIMEDOUT), errors.As(err, &netErr) && netErr.Timeout():
		return FailureTimeout
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return FailureReset
	case errors.Is(err, syscall.EHOSTUNREACH), errors.Is(err, syscall.ENETUNREACH):
		return FailureUnreachable
	default:
		return FailureOther
	}
}
