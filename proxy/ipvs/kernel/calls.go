package kernel

import (
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Calls counts calls to an Interface by method name ("RealServers",
// "AddRealServer"). Against the real kernel each call is one netlink
// request (a dump or a change), except Addresses, AddAddress and
// DelAddress (two: the link is looked up first), EnsureDummy (one, two
// when it creates the device) and NodeAddresses (two: the excepted link,
// then one dump of every address); the sysctls are /proc/sys files, not
// netlink.
type Calls map[string]int

// readCalls are the methods that only read.
var readCalls = map[string]bool{
	"VirtualServers": true, "RealServers": true, "Timeouts": true,
	"Addresses": true, "NodeAddresses": true,
	"ListSets": true, "Entries": true,
	"Sysctl": true,
}

// IsRead reports whether the method named call only reads the kernel.
func IsRead(call string) bool { return readCalls[call] }

// Reads is how many calls read the kernel.
func (c Calls) Reads() int { return c.sum(true) }

// Writes is how many calls changed (or tried to change) the kernel.
func (c Calls) Writes() int { return c.sum(false) }

func (c Calls) sum(reads bool) int {
	n := 0
	for call, count := range c {
		if IsRead(call) == reads {
			n += count
		}
	}
	return n
}

// Total is how many calls were made.
func (c Calls) Total() int { return c.Reads() + c.Writes() }

// String lists the counts sorted by name: "AddRealServer=1 NodeAddresses=1"
// ("none" when there are none).
func (c Calls) String() string {
	if len(c) == 0 {
		return "none"
	}
	var parts []string
	for _, call := range slices.Sorted(maps.Keys(c)) {
		parts = append(parts, call+"="+strconv.Itoa(c[call]))
	}
	return strings.Join(parts, " ")
}
