package config

import (
	"fmt"
	"strings"
)

// Mode is a kube-proxy proxy mode, as written in the mode field.
type Mode string

// The proxy modes upstream kube-proxy knows on Linux.
const (
	ModeIPTables Mode = "iptables"
	ModeIPVS     Mode = "ipvs"
	ModeNFTables Mode = "nftables"
)

// DefaultMode is the mode an empty mode field means on Linux.
const DefaultMode = ModeIPTables

// KnownModes lists every mode the parser accepts, in the order error
// messages name them.
var KnownModes = []Mode{ModeIPTables, ModeIPVS, ModeNFTables}

// parseMode maps the mode field to a Mode: "" is DefaultMode, anything not in
// KnownModes is an error.
func parseMode(source, raw string) (Mode, error) {
	if raw == "" {
		return DefaultMode, nil
	}
	for _, m := range KnownModes {
		if Mode(raw) == m {
			return m, nil
		}
	}
	return "", &Error{Source: source, Field: "mode", Value: raw,
		Reason: "unknown proxy mode (want " + joinModes(KnownModes) + ")"}
}

// CheckModeSupported returns nil when c.Mode is one of supported, and
// otherwise an error naming the source, the mode and what is supported, e.g.
//
//	kube-system/kube-proxy config.conf: mode "ipvs": not implemented by svclab yet (supported: iptables)
func (c Config) CheckModeSupported(supported ...Mode) error {
	for _, m := range supported {
		if c.Mode == m {
			return nil
		}
	}
	return &Error{Source: c.Source, Field: "mode", Value: string(c.Mode),
		Reason: fmt.Sprintf("not implemented by svclab yet (supported: %s)", joinModes(supported))}
}

func joinModes(modes []Mode) string {
	names := make([]string, len(modes))
	for i, m := range modes {
		names[i] = string(m)
	}
	return strings.Join(names, ", ")
}
